import type { Metadata } from "next";
import Link from "next/link";
import { can } from "@/lib/auth/permissions";
import { SignOutButton } from "@/components/sign-out-button";
import { getActor } from "./_server/actor";
import "./globals.css";

export const metadata: Metadata = {
  title: "School-Core",
  description: "Control plane for student coding agents in disposable guests",
};
export const dynamic = "force-dynamic";

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  const actor = await getActor().catch(() => null);
  return (
    <html lang="en">
      <body className="min-h-screen">
        <header className="border-b border-slate-200 bg-white">
          <nav className="mx-auto flex max-w-6xl flex-wrap items-center gap-4 px-4 py-3" aria-label="Main">
            <Link href="/" className="font-semibold text-slate-900 no-underline">
              School-Core
            </Link>
            {can(actor, "review.view") && <Link href="/teacher">Review queue</Link>}
            {can(actor, "operator.view") && <Link href="/operator">Operator</Link>}
            <span className="ml-auto flex items-center gap-3 text-sm text-slate-600">
              {actor ? (
                <>
                  <Link href="/profile" data-testid="signed-in-as" title="Profile and notifications">
                    {actor.email}
                  </Link>
                  <SignOutButton />
                </>
              ) : (
                <Link href="/signin">Sign in</Link>
              )}
            </span>
          </nav>
        </header>
        <main className="mx-auto max-w-6xl px-4 py-6">{children}</main>
      </body>
    </html>
  );
}
