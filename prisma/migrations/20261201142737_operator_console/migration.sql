-- AlterTable
ALTER TABLE "TargetRepository" ADD COLUMN     "isDisabled" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "autoRetryAt" TIMESTAMPTZ(3),
ADD COLUMN     "autoRetryCount" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "limitsOverrides" JSONB,
ADD COLUMN     "limitsVersion" INTEGER;

-- CreateTable
CREATE TABLE "SettingVersion" (
    "id" BIGSERIAL NOT NULL,
    "key" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "value" JSONB NOT NULL,
    "actorId" UUID,
    "reason" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SettingVersion_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "SettingVersion_key_version_key" ON "SettingVersion"("key", "version");
