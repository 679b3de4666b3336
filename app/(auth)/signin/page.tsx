import { redirect } from "next/navigation";
import { getActor } from "@/app/_server/actor";
import { safeReturnPath } from "@/lib/auth/safe-return-path";
import { SignInForm } from "./signin-form";

type Props = { searchParams: Promise<{ callbackUrl?: string }> };

export default async function SignInPage({ searchParams }: Props) {
  const returnPath = safeReturnPath((await searchParams).callbackUrl);
  if (await getActor().catch(() => null)) redirect(returnPath);
  return (
    <section className="mx-auto max-w-sm space-y-4">
      <h1>Sign in</h1>
      <SignInForm returnPath={returnPath} />
    </section>
  );
}
