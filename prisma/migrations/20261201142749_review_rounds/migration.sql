-- DropIndex
DROP INDEX "Candidate_taskId_key";

-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "round" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "Candidate" ADD COLUMN     "parentCandidateId" TEXT,
ADD COLUMN     "round" INTEGER NOT NULL DEFAULT 1;

-- CreateTable
CREATE TABLE "ReviewLineComment" (
    "id" UUID NOT NULL,
    "taskId" UUID NOT NULL,
    "candidateId" TEXT NOT NULL,
    "round" INTEGER NOT NULL,
    "path" TEXT NOT NULL,
    "side" TEXT NOT NULL,
    "line" INTEGER NOT NULL,
    "lineSha" TEXT NOT NULL,
    "lineText" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "authorId" UUID NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ReviewLineComment_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ReviewLineComment_taskId_createdAt_idx" ON "ReviewLineComment"("taskId", "createdAt");

-- CreateIndex
CREATE INDEX "ReviewLineComment_candidateId_idx" ON "ReviewLineComment"("candidateId");

-- CreateIndex
CREATE UNIQUE INDEX "Candidate_taskId_round_key" ON "Candidate"("taskId", "round");

-- CreateIndex
CREATE INDEX "ReviewDecision_createdAt_idx" ON "ReviewDecision"("createdAt");

-- AddForeignKey
ALTER TABLE "ReviewLineComment" ADD CONSTRAINT "ReviewLineComment_taskId_fkey" FOREIGN KEY ("taskId") REFERENCES "Task"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ReviewLineComment" ADD CONSTRAINT "ReviewLineComment_candidateId_fkey" FOREIGN KEY ("candidateId") REFERENCES "Candidate"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ReviewLineComment" ADD CONSTRAINT "ReviewLineComment_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
