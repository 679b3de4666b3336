-- CreateTable
CREATE TABLE "UserOidcIdentity" (
    "id" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "issuer" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UserOidcIdentity_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "UserOidcIdentity_issuer_subject_key" ON "UserOidcIdentity"("issuer", "subject");

-- CreateIndex
CREATE UNIQUE INDEX "UserOidcIdentity_userId_issuer_key" ON "UserOidcIdentity"("userId", "issuer");

-- AddForeignKey
ALTER TABLE "UserOidcIdentity" ADD CONSTRAINT "UserOidcIdentity_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
