-- AlterEnum
ALTER TYPE "TaskState" ADD VALUE 'not_chosen';

-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "agentProfileVersionId" UUID,
ADD COLUMN     "attemptGroupId" UUID;

-- CreateTable
CREATE TABLE "AgentProfile" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "owner" TEXT NOT NULL DEFAULT '',
    "isBuiltIn" BOOLEAN NOT NULL DEFAULT false,
    "currentVersion" INTEGER NOT NULL DEFAULT 1,
    "createdById" UUID,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "AgentProfile_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AgentProfileVersion" (
    "id" UUID NOT NULL,
    "profileId" UUID NOT NULL,
    "version" INTEGER NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "command" JSONB NOT NULL,
    "image" JSONB,
    "environment" JSONB NOT NULL DEFAULT '{}',
    "codeDigest" TEXT,
    "codeBytes" INTEGER,
    "createdById" UUID,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AgentProfileVersion_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AttemptGroup" (
    "id" UUID NOT NULL,
    "repositoryId" UUID NOT NULL,
    "issueNumber" INTEGER NOT NULL,
    "issueTitle" TEXT NOT NULL,
    "createdById" UUID,
    "chosenTaskId" UUID,
    "chosenById" UUID,
    "chosenAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AttemptGroup_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "AgentProfile_name_key" ON "AgentProfile"("name");

-- CreateIndex
CREATE UNIQUE INDEX "AgentProfileVersion_profileId_version_key" ON "AgentProfileVersion"("profileId", "version");

-- CreateIndex
CREATE UNIQUE INDEX "AttemptGroup_chosenTaskId_key" ON "AttemptGroup"("chosenTaskId");

-- CreateIndex
CREATE INDEX "AttemptGroup_repositoryId_createdAt_idx" ON "AttemptGroup"("repositoryId", "createdAt");

-- CreateIndex
CREATE INDEX "Task_attemptGroupId_idx" ON "Task"("attemptGroupId");

-- CreateIndex
CREATE INDEX "Task_agentProfileVersionId_idx" ON "Task"("agentProfileVersionId");

-- AddForeignKey
ALTER TABLE "Task" ADD CONSTRAINT "Task_agentProfileVersionId_fkey" FOREIGN KEY ("agentProfileVersionId") REFERENCES "AgentProfileVersion"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Task" ADD CONSTRAINT "Task_attemptGroupId_fkey" FOREIGN KEY ("attemptGroupId") REFERENCES "AttemptGroup"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AgentProfileVersion" ADD CONSTRAINT "AgentProfileVersion_profileId_fkey" FOREIGN KEY ("profileId") REFERENCES "AgentProfile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
