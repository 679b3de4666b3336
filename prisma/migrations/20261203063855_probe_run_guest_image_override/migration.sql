-- A probe run may qualify an agent profiles own guest image (issue 26)
-- the image its guests ran from in place of the guest.image setting. Null for every earlier run.
-- AlterTable
ALTER TABLE "ProbeRun" ADD COLUMN     "guestImageOverride" JSONB;
