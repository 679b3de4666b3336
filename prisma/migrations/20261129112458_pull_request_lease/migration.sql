-- AlterTable
ALTER TABLE "PullRequest" ADD COLUMN     "leaseTakenAt" TIMESTAMPTZ(3);
