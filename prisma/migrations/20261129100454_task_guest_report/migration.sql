-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "guestReport" JSONB;
