import "server-only";
import { notFound } from "next/navigation";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { isAppError } from "@/lib/errors";
import type { TPageDeps } from "@/lib/pages/page-deps";

/** The deps every page's `read…Page` is handed (issue 28, item 7): composed here, once. */
export async function getPageDeps(): Promise<TPageDeps> {
  return { db: await getDb(), env: getEnv() };
}

/** A view model that is not there (or not there for this actor) is the 404 page. */
export async function orNotFound<T>(read: Promise<T>): Promise<T> {
  return read.catch((error: unknown) => {
    if (isAppError(error) && error.code === "NOT_FOUND") notFound();
    throw error;
  });
}
