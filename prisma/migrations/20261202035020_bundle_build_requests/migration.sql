-- AlterTable
ALTER TABLE "DependencySetupRun" ADD COLUMN     "heartbeatAt" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "BundleBuildRequest" (
    "id" UUID NOT NULL,
    "repositoryId" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "ref" TEXT,
    "candidateId" TEXT,
    "isForced" BOOLEAN NOT NULL DEFAULT false,
    "state" TEXT NOT NULL DEFAULT 'queued',
    "waitingReason" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "sourceSha" TEXT,
    "bundleId" UUID,
    "isReused" BOOLEAN,
    "setupRunId" UUID,
    "errorCode" TEXT,
    "errorSummary" TEXT,
    "requestedById" UUID,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMPTZ(3),
    "heartbeatAt" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "BundleBuildRequest_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "BundleBuildRequest_repositoryId_createdAt_idx" ON "BundleBuildRequest"("repositoryId", "createdAt");

-- CreateIndex
CREATE INDEX "BundleBuildRequest_state_createdAt_idx" ON "BundleBuildRequest"("state", "createdAt");

-- AddForeignKey
ALTER TABLE "BundleBuildRequest" ADD CONSTRAINT "BundleBuildRequest_repositoryId_fkey" FOREIGN KEY ("repositoryId") REFERENCES "TargetRepository"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
