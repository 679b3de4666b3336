import Link from "next/link";

const LINKS = [
  ["/operator", "Dashboard"],
  ["/operator/tasks", "Tasks"],
  ["/operator/machines", "Machines"],
  ["/operator/manifest", "Trusted checks"],
  ["/operator/settings", "Settings"],
  ["/operator/publications", "Publications"],
] as const;

export function OperatorNav() {
  return (
    <nav className="mb-4 flex flex-wrap gap-3 border-b border-slate-200 pb-2 text-sm" aria-label="Operator">
      {LINKS.map(([href, label]) => (
        <Link key={href} href={href}>
          {label}
        </Link>
      ))}
    </nav>
  );
}
