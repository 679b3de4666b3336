import { can } from "@/lib/auth/permissions";
import { TeacherNav } from "@/components/teacher-nav";
import { getActor } from "../_server/actor";

// Each teacher page checks its own permission; the layout only decides whether to show the nav.
export default async function TeacherLayout({ children }: { children: React.ReactNode }) {
  const actor = await getActor().catch(() => null);
  return (
    <div>
      {can(actor, "review.view") && <TeacherNav />}
      {children}
    </div>
  );
}
