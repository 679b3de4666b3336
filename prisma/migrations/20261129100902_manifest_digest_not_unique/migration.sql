-- DropIndex
DROP INDEX "TrustedManifest_digest_key";

-- CreateIndex
CREATE INDEX "TrustedManifest_digest_idx" ON "TrustedManifest"("digest");
