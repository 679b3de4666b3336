"use client";
import { signOut } from "next-auth/react";

export function SignOutButton() {
  return (
    <button
      type="button"
      className="rounded border border-slate-300 px-3 py-1 text-sm hover:bg-slate-100"
      onClick={() => signOut({ callbackUrl: "/signin" })}
    >
      Sign out
    </button>
  );
}
