-- One kernel for background runs (lib/runs, issue 28 item 2): the state of the setup run and of
-- the build request become the RunState enum. Written by hand, not as the diff Prisma wrote (that
-- drops and re-adds the column, losing the state of every row): each column is converted in
-- place, so every existing row keeps its state. The old code only ever wrote these values.
-- (No apostrophes or semicolons in these comments: adapter-pg splits the script on every
-- semicolon and runs each statement on its own, so a failure part-way keeps what ran before it.)

-- First, before anything changes: a state outside the enum stops the migration here, with a
-- message naming it, rather than being guessed or leaving a half-converted schema. The body
-- spells its semicolons as \073 (see the init migration).
DO E'BEGIN IF EXISTS (SELECT 1 FROM "DependencySetupRun" WHERE "state" NOT IN (''queued'', ''running'', ''succeeded'', ''failed'', ''cancelled'')) OR EXISTS (SELECT 1 FROM "BundleBuildRequest" WHERE "state" NOT IN (''queued'', ''running'', ''succeeded'', ''failed'', ''cancelled'')) THEN RAISE EXCEPTION ''runs_kernel: a DependencySetupRun or BundleBuildRequest has a state outside RunState (queued, running, succeeded, failed, cancelled)\073 fix or remove that row, then migrate again''\073 END IF\073 END';

-- CreateEnum
CREATE TYPE "RunState" AS ENUM ('queued', 'running', 'succeeded', 'failed', 'cancelled');

-- AlterTable: the text default cannot be cast with the column, so it is dropped and set again.
ALTER TABLE "DependencySetupRun" ALTER COLUMN "state" DROP DEFAULT;
ALTER TABLE "DependencySetupRun" ALTER COLUMN "state" TYPE "RunState" USING ("state"::"RunState");
ALTER TABLE "DependencySetupRun" ALTER COLUMN "state" SET DEFAULT 'running';

-- AlterTable (its index on ("state", "createdAt") is rebuilt by PostgreSQL with the column)
ALTER TABLE "BundleBuildRequest" ALTER COLUMN "state" DROP DEFAULT;
ALTER TABLE "BundleBuildRequest" ALTER COLUMN "state" TYPE "RunState" USING ("state"::"RunState");
ALTER TABLE "BundleBuildRequest" ALTER COLUMN "state" SET DEFAULT 'queued';

-- The kernel sweep counts a running run without a heartbeat as stale at once, and a run from before
-- heartbeats (the old sweep of setup runs counted those from their start) is given its start as its
-- last beat, so it is judged as it was.
UPDATE "DependencySetupRun" SET "heartbeatAt" = "startedAt" WHERE "state" = 'running' AND "heartbeatAt" IS NULL;
UPDATE "BundleBuildRequest" SET "heartbeatAt" = COALESCE("startedAt", "createdAt") WHERE "state" = 'running' AND "heartbeatAt" IS NULL;
