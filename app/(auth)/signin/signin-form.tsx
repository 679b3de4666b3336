"use client";
import { signIn } from "next-auth/react";
import { useState } from "react";

const MESSAGES: Record<string, string> = {
  CredentialsSignin: "Email or password is not correct.",
  RATE_LIMITED: "Too many failed sign-ins. Wait a few minutes and try again.",
  SIGNIN_UNAVAILABLE: "Sign-in is unavailable right now. Try again shortly.",
  LOCAL_SIGNIN_OFF: "Sign-in with a password is for operators only. Use your school account.",
  OIDC_NO_GROUP:
    "Your school account is not in a group that may use School-Core. Ask an operator or your school's IT team to add you to the teacher group.",
  OIDC_EMAIL_UNVERIFIED:
    "A School-Core account already uses this email, and your identity provider has not verified it, so it was not linked. Ask an operator.",
  OIDC_EMAIL_MISSING:
    "Your identity provider did not give an email address, which a first sign-in needs. Ask an operator.",
  OIDC_DISABLED: "This account is disabled. Ask an operator.",
  OIDC_REFUSED: "The identity provider's answer was refused. Try again, or ask an operator.",
};

/** next-auth's own codes for a failed or tampered OAuth round trip: one message, no detail. */
const OAUTH_FAILURE = "Sign-in with your identity provider did not complete. Try again.";

function messageOf(code: string): string {
  return MESSAGES[code] ?? (code === "CredentialsSignin" ? MESSAGES.CredentialsSignin! : OAUTH_FAILURE);
}

type Props = { returnPath: string; oidc: { id: string; name: string } | null; initialError: string | null };

export function SignInForm({ returnPath, oidc, initialError }: Props) {
  const [error, setError] = useState<string | null>(initialError ? messageOf(initialError) : null);
  const [isPending, setPending] = useState(false);

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPending(true);
    setError(null);
    const form = new FormData(event.currentTarget);
    const result = await signIn("credentials", {
      email: form.get("email"),
      password: form.get("password"),
      redirect: false,
    });
    if (!result || result.error) {
      setError(MESSAGES[result?.error ?? ""] ?? MESSAGES.CredentialsSignin!);
      setPending(false);
      return;
    }
    window.location.assign(returnPath);
  }

  function onOidcSignIn() {
    setPending(true);
    setError(null);
    void signIn(oidc!.id, { callbackUrl: returnPath });
  }

  return (
    <>
      {oidc && (
        <div className="space-y-2 rounded border border-slate-200 bg-white p-4">
          <button
            type="button"
            onClick={onOidcSignIn}
            disabled={isPending}
            className="w-full rounded bg-blue-700 px-3 py-2 text-white disabled:opacity-60"
          >
            Sign in with {oidc.name}
          </button>
          <p className="text-center text-xs text-slate-600">or with a School-Core password</p>
        </div>
      )}
      <form onSubmit={onSubmit} className="space-y-3 rounded border border-slate-200 bg-white p-4">
        <label className="block text-sm">
          Email
          <input
            name="email"
            type="email"
            autoComplete="username"
            required
            className="mt-1 w-full rounded border border-slate-300 px-2 py-1"
          />
        </label>
        <label className="block text-sm">
          Password
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            className="mt-1 w-full rounded border border-slate-300 px-2 py-1"
          />
        </label>
        {error && (
          <p role="alert" data-testid="signin-error" className="text-sm text-red-700">
            {error}
          </p>
        )}
        <button
          type="submit"
          disabled={isPending}
          className="w-full rounded bg-blue-700 px-3 py-2 text-white disabled:opacity-60"
        >
          {isPending ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </>
  );
}
