/**
 * A task row for tests that need one in a given state without running the pipeline: the fields
 * every task must have, with placeholder values, and whatever the test sets on top.
 */
import { randomUUID } from "node:crypto";
import type { Prisma } from "../db/generated/client";

export function taskRow(
  repositoryId: string,
  fields: Partial<Omit<Prisma.TaskUncheckedCreateInput, "repositoryId">> = {},
): Prisma.TaskUncheckedCreateInput {
  return {
    repositoryId,
    issueNumber: 1,
    issueTitle: "t",
    prompt: "p",
    baseRef: "main",
    baseSha: "a".repeat(40),
    operationId: randomUUID(),
    limits: {},
    ...fields,
  };
}
