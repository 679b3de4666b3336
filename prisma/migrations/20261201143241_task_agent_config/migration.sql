-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "agentConfig" JSONB,
ADD COLUMN     "agentConfigDigest" TEXT;
