"use client";
/**
 * The operator console's navigation, grouped by what an operator is doing (issue 28, item 9): running
 * the work, qualifying the substrate, configuring it, and auditing it — with the current page marked
 * (aria-current) so a reader knows where they are. Labels stay as they were: the e2e journeys click them.
 */
import Link from "next/link";
import { usePathname } from "next/navigation";

const GROUPS = [
  {
    label: "Run",
    links: [
      ["/operator", "Dashboard"],
      ["/operator/tasks", "Tasks"],
      ["/operator/machines", "Machines"],
      ["/operator/quarantine", "Quarantine"],
      ["/operator/publications", "Publications"],
    ],
  },
  {
    label: "Qualify",
    links: [
      ["/operator/probes", "Probes"],
      ["/operator/manifest", "Trusted checks"],
    ],
  },
  {
    label: "Configure",
    links: [
      ["/operator/limits", "Limits"],
      ["/operator/spend", "Spend"],
      ["/operator/relay", "Relay"],
      ["/operator/publication", "Publication"],
      ["/operator/repositories", "Repositories"],
      ["/operator/agents", "Agents"],
      ["/operator/users", "Users"],
      ["/operator/settings", "Settings"],
    ],
  },
  { label: "Audit", links: [["/operator/audit", "Audit"]] },
] as const;

/** The link a page belongs to: the longest one its path starts with (the dashboard only for itself). */
function currentHref(pathname: string): string | undefined {
  const all = GROUPS.flatMap((group) => group.links.map(([href]) => href as string));
  return all
    .filter((href) => pathname === href || (href !== "/operator" && pathname.startsWith(`${href}/`)))
    .sort((a, b) => b.length - a.length)[0];
}

export function OperatorNav() {
  const current = currentHref(usePathname() ?? "");
  return (
    <nav className="mb-4 flex flex-wrap gap-x-6 gap-y-2 border-b border-slate-200 pb-2 text-sm" aria-label="Operator">
      {GROUPS.map((group) => (
        <div key={group.label} className="flex flex-wrap items-baseline gap-2">
          <span className="text-xs font-semibold uppercase tracking-wide text-slate-500">{group.label}</span>
          {group.links.map(([href, label]) => (
            <Link
              key={href}
              href={href}
              aria-current={href === current ? "page" : undefined}
              className={
                href === current ? "rounded bg-slate-800 px-1.5 py-0.5 font-medium text-white" : "px-1.5 py-0.5"
              }
            >
              {label}
            </Link>
          ))}
        </div>
      ))}
    </nav>
  );
}
