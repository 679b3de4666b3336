-- AlterEnum
ALTER TYPE "MachinePurpose" ADD VALUE 'builder';

-- AlterTable
ALTER TABLE "TargetRepository" ADD COLUMN     "setupRecipe" JSONB;

-- AlterTable
ALTER TABLE "GuestMachine" ADD COLUMN     "setupRunId" UUID;

-- CreateTable
CREATE TABLE "DependencySetupRun" (
    "id" UUID NOT NULL,
    "repositoryId" UUID NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'running',
    "reason" TEXT NOT NULL,
    "sourceSha" TEXT NOT NULL,
    "candidateId" TEXT,
    "recipe" JSONB NOT NULL,
    "recipeDigest" TEXT NOT NULL,
    "lockfileDigest" TEXT NOT NULL,
    "imageDigest" TEXT NOT NULL,
    "fetchLog" JSONB,
    "bundleId" UUID,
    "errorCode" TEXT,
    "errorSummary" TEXT,
    "durationMs" INTEGER,
    "requestedById" UUID,
    "startedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "DependencySetupRun_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DependencyBundle" (
    "id" UUID NOT NULL,
    "repositoryId" UUID NOT NULL,
    "keyDigest" TEXT NOT NULL,
    "imageDigest" TEXT NOT NULL,
    "lockfileDigest" TEXT NOT NULL,
    "recipeDigest" TEXT NOT NULL,
    "lockfiles" JSONB NOT NULL,
    "sourceSha" TEXT NOT NULL,
    "source" TEXT NOT NULL DEFAULT 'base',
    "candidateId" TEXT,
    "artifactDigest" TEXT NOT NULL,
    "sizeBytes" BIGINT NOT NULL,
    "fileCount" INTEGER NOT NULL,
    "packageCount" INTEGER NOT NULL,
    "setupRunId" UUID NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DependencyBundle_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "DependencySetupRun_repositoryId_startedAt_idx" ON "DependencySetupRun"("repositoryId", "startedAt");

-- CreateIndex
CREATE UNIQUE INDEX "DependencyBundle_repositoryId_keyDigest_key" ON "DependencyBundle"("repositoryId", "keyDigest");

-- AddForeignKey
ALTER TABLE "GuestMachine" ADD CONSTRAINT "GuestMachine_setupRunId_fkey" FOREIGN KEY ("setupRunId") REFERENCES "DependencySetupRun"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DependencySetupRun" ADD CONSTRAINT "DependencySetupRun_repositoryId_fkey" FOREIGN KEY ("repositoryId") REFERENCES "TargetRepository"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DependencyBundle" ADD CONSTRAINT "DependencyBundle_repositoryId_fkey" FOREIGN KEY ("repositoryId") REFERENCES "TargetRepository"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
