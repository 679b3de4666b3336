import { can } from "@/lib/auth/permissions";
import { OperatorNav } from "@/components/operator-nav";
import { getActor } from "../_server/actor";

// Each operator page checks its own permission; the layout only decides whether to show the nav.
export default async function OperatorLayout({ children }: { children: React.ReactNode }) {
  const actor = await getActor().catch(() => null);
  return (
    <div>
      {can(actor, "operator.view") && <OperatorNav />}
      {children}
    </div>
  );
}
