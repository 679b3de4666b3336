"use client";
import { signIn } from "next-auth/react";
import { useState } from "react";

const MESSAGES: Record<string, string> = {
  CredentialsSignin: "Email or password is not correct.",
  RATE_LIMITED: "Too many failed sign-ins. Wait a few minutes and try again.",
  SIGNIN_UNAVAILABLE: "Sign-in is unavailable right now. Try again shortly.",
};

export function SignInForm({ returnPath }: { returnPath: string }) {
  const [error, setError] = useState<string | null>(null);
  const [isPending, setPending] = useState(false);

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPending(true);
    setError(null);
    const form = new FormData(event.currentTarget);
    const result = await signIn("credentials", { email: form.get("email"), password: form.get("password"), redirect: false });
    if (!result || result.error) {
      setError(MESSAGES[result?.error ?? ""] ?? MESSAGES.CredentialsSignin!);
      setPending(false);
      return;
    }
    window.location.assign(returnPath);
  }

  return (
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
      <button type="submit" disabled={isPending} className="w-full rounded bg-blue-700 px-3 py-2 text-white disabled:opacity-60">
        {isPending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
