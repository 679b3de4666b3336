import { redirect } from "next/navigation";
import { getActor } from "@/app/_server/actor";
import { getOidcSignInOption } from "@/app/_server/auth-options";
import { safeReturnPath } from "@/lib/auth/safe-return-path";
import { SignInForm } from "./signin-form";

type Props = { searchParams: Promise<{ callbackUrl?: string; error?: string }> };

export default async function SignInPage({ searchParams }: Props) {
  const { callbackUrl, error } = await searchParams;
  const returnPath = safeReturnPath(callbackUrl);
  if (await getActor().catch(() => null)) redirect(returnPath);
  return (
    <section className="mx-auto max-w-sm space-y-4">
      <h1>Sign in</h1>
      <SignInForm
        returnPath={returnPath}
        oidc={getOidcSignInOption()}
        initialError={typeof error === "string" ? error.slice(0, 100) : null}
      />
    </section>
  );
}
