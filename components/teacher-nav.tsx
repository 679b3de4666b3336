import Link from "next/link";

const LINKS = [
  ["/teacher", "Review queue"],
  ["/teacher/history", "History"],
  ["/teacher/insights", "Insights"],
] as const;

export function TeacherNav() {
  return (
    <nav className="mb-4 flex flex-wrap gap-3 border-b border-slate-200 pb-2 text-sm" aria-label="Teacher">
      {LINKS.map(([href, label]) => (
        <Link key={href} href={href}>
          {label}
        </Link>
      ))}
    </nav>
  );
}
