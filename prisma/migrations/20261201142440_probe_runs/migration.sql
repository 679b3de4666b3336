-- CreateEnum
CREATE TYPE "ProbeResultStatus" AS ENUM ('pending', 'running', 'passed', 'failed', 'error');

-- DropIndex
DROP INDEX "ProbeRun_probe_createdAt_idx";

-- AlterTable
ALTER TABLE "TargetRepository" ADD COLUMN     "probeRunId" UUID;

-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "agentCommand" JSONB,
ADD COLUMN     "probeRunId" UUID;

-- AlterTable
ALTER TABLE "ProbeRun" DROP COLUMN "evidence",
DROP COLUMN "probe",
ADD COLUMN     "config" JSONB NOT NULL,
ADD COLUMN     "configDigest" TEXT NOT NULL,
ADD COLUMN     "heartbeatAt" TIMESTAMPTZ(3),
ADD COLUMN     "probes" TEXT[],
ADD COLUMN     "startedAt" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "ProbeResult" (
    "id" UUID NOT NULL,
    "runId" UUID NOT NULL,
    "probe" TEXT NOT NULL,
    "status" "ProbeResultStatus" NOT NULL DEFAULT 'pending',
    "durationMs" INTEGER,
    "detail" JSONB,
    "providerError" TEXT,
    "startedAt" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "ProbeResult_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ProbeResult_runId_probe_key" ON "ProbeResult"("runId", "probe");

-- CreateIndex
CREATE INDEX "ProbeRun_configDigest_createdAt_idx" ON "ProbeRun"("configDigest", "createdAt");

-- AddForeignKey
ALTER TABLE "ProbeResult" ADD CONSTRAINT "ProbeResult_runId_fkey" FOREIGN KEY ("runId") REFERENCES "ProbeRun"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
