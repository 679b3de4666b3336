-- Issue 26 item 1: an agent profile whose code carries a lockfile gets a dependency bundle built by
-- the trusted builder. Such a setup run and its bundle belong to no repository, so the repository
-- column becomes optional (existing rows keep theirs), and a version records the recipe its
-- lockfile selects and that lockfile's digest.

-- AlterTable
ALTER TABLE "DependencySetupRun" ALTER COLUMN "repositoryId" DROP NOT NULL;

-- AlterTable
ALTER TABLE "DependencyBundle" ALTER COLUMN "repositoryId" DROP NOT NULL;

-- AlterTable
ALTER TABLE "AgentProfileVersion" ADD COLUMN     "dependencyLockfileDigest" TEXT,
ADD COLUMN     "dependencyRecipe" TEXT;
