import { redirect } from "next/navigation";
import { can } from "@/lib/auth/permissions";
import { getActor } from "./_server/actor";

export default async function HomePage() {
  const actor = await getActor();
  if (!actor) redirect("/signin");
  if (can(actor, "operator.view")) redirect("/operator");
  if (can(actor, "review.view")) redirect("/teacher");
  return <p>Your account has no role yet. Ask an operator to grant you one.</p>;
}
