-- CreateEnum
CREATE TYPE "SpendResource" AS ENUM ('machine', 'model');

-- AlterTable
ALTER TABLE "RelayCapability" ADD COLUMN     "inputMicrosPerMTok" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "maxTokens" BIGINT NOT NULL DEFAULT 1000000000000,
ADD COLUMN     "modelReservedMicros" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "outputMicrosPerMTok" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "tokensUsed" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "RelayCall" ADD COLUMN     "costMicros" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "inputTokens" INTEGER,
ADD COLUMN     "outputTokens" INTEGER,
ADD COLUMN     "tokensCharged" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "SpendLedgerEntry" ADD COLUMN     "relayCapabilityId" UUID,
ADD COLUMN     "resource" "SpendResource" NOT NULL DEFAULT 'machine';

-- CreateIndex
CREATE INDEX "SpendLedgerEntry_relayCapabilityId_idx" ON "SpendLedgerEntry"("relayCapabilityId");
