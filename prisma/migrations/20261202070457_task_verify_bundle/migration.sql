-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "verifyBundleId" UUID;

-- AddForeignKey
ALTER TABLE "Task" ADD CONSTRAINT "Task_verifyBundleId_fkey" FOREIGN KEY ("verifyBundleId") REFERENCES "DependencyBundle"("id") ON DELETE SET NULL ON UPDATE CASCADE;
