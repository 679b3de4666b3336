-- AlterTable
ALTER TABLE "WorkerHeartbeat" ADD COLUMN     "restartCount" INTEGER NOT NULL DEFAULT 0;
