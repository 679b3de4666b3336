import Link from "next/link";

const LINKS = [
  ["/operator", "Dashboard"],
  ["/operator/probes", "Probes"],
  ["/operator/tasks", "Tasks"],
  ["/operator/machines", "Machines"],
  ["/operator/quarantine", "Quarantine"],
  ["/operator/manifest", "Trusted checks"],
  ["/operator/limits", "Limits"],
  ["/operator/spend", "Spend"],
  ["/operator/repositories", "Repositories"],
  ["/operator/agents", "Agents"],
  ["/operator/users", "Users"],
  ["/operator/relay", "Relay"],
  ["/operator/publication", "Publication"],
  ["/operator/publications", "Publications"],
  ["/operator/settings", "Settings"],
  ["/operator/audit", "Audit"],
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
