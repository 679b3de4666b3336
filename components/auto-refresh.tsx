"use client";
import { useRouter } from "next/navigation";
import { useEffect } from "react";

/** Live progress without a full-page reload: re-renders the server components every few seconds while active. */
export function AutoRefresh({ isActive, intervalMs = 2000 }: { isActive: boolean; intervalMs?: number }) {
  const router = useRouter();
  useEffect(() => {
    if (!isActive) return;
    const timer = setInterval(() => router.refresh(), intervalMs);
    return () => clearInterval(timer);
  }, [isActive, intervalMs, router]);
  return isActive ? (
    <span className="text-xs text-slate-500" data-testid="live-indicator">
      live — updating every {Math.round(intervalMs / 1000)} s
    </span>
  ) : null;
}
