/**
 * The recipe of the default guest image, `school-core/node24`, registered by `npm start` and by
 * every test substrate: the host's toolchain paths read-only (never all of /usr), the project's Node 24 binary, the
 * student agents' SDK packages (read-only, /node_modules), and a synthesized minimal /etc — never the host's /etc wholesale, never the project directory. It is
 * rebuilt only when the Node binary or an SDK package changed (its provenance is recorded with the registration).
 */
import fsp from "node:fs/promises";
import path from "node:path";
import { GUEST_SDK_MODULES_DIR } from "../../lib/contract/guest-layout";
import { AppError } from "../../lib/errors";
import { PROJECT_ROOT } from "../../lib/project-root";
import { ImageBuilder } from "./image-builder";
import { imageRecordOf, sha256Hex, type TImageRecord } from "./image-manifest";
import { latestImageRef, loadImageManifest, readImageRefs } from "./image-store";

export const DEFAULT_GUEST_IMAGE = "school-core/node24";

const PASSWD =
  "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nstudent:x:1000:1000:student:/workspace:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
const GROUP = "root:x:0:\nstudent:x:1000:\nnogroup:x:65534:\n";
const HOSTS = "127.0.0.1\tlocalhost school-core-guest\n::1\tlocalhost ip6-localhost ip6-loopback\n";
const NSSWITCH = "passwd: files\ngroup: files\nshadow: files\nhosts: files\n";
/** Top-level toolchain paths: merged-/usr links are recreated, anything else is bound as a whole. */
const HOST_TOOLCHAIN = ["/bin", "/sbin", "/lib", "/lib64"];
/**
 * The parts of host /usr a guest's toolchain needs (issue 12, item 8) — never /usr itself, so
 * /usr/local (host-installed tools and their data), /usr/src and /usr/include stay out.
 */
const HOST_USR_TOOLCHAIN = ["/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib64", "/usr/libexec", "/usr/share"];
/** Bumped when the recipe changes, so a registered image built by an older recipe is rebuilt. */
const RECIPE_VERSION = 4;
/**
 * The npm packages a student agent may import with no network (issue 25): the official OpenAI and
 * Anthropic SDKs with their dependencies, gathered into one directory of hard links (the runtime
 * files only: no type declarations, source maps or sources) and bound read-only at /node_modules —
 * one mount for all of them, so P3's canary search, which reads every mount point's top level
 * within a fixed budget, is not spread thinner by each package. Node's ESM resolution walks every
 * parent directory of the importing file up to /, so `import OpenAI from "openai"` works from an
 * agent anywhere in the guest (/tmp/school-core-input, /workspace/repo …) — NODE_PATH would not
 * (ESM ignores it). A repository's own node_modules still wins, being nearer.
 */
const GUEST_SDK_PACKAGES = ["openai", "@anthropic-ai/sdk"] as const;
/** Files a package needs only to be type-checked or debugged, never to run. */
const NOT_RUNTIME = /\.(d\.ts|d\.mts|d\.cts|map)$/;
/** The image file naming each bound package's version and package.json digest: binds are not hashed, this is. */
const GUEST_SDK_MARKER = "opt/school-core/sdk-packages.json";
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

export type TEnsureDefaultImageOptions = { nodeBinaryPath?: string };

type TSdkPackage = { name: string; version: string; packageJsonSha256: string; hostDir: string };

/**
 * The SDK packages and their dependencies as installed in the project: where each is, its version
 * and package.json digest. A dependency nested in its dependent's own node_modules rides along in
 * that bind; any other must be installed at the top level, or the image is refused (an SDK that
 * cannot load in the guest is a configuration error, not a runtime surprise).
 */
async function readSdkPackages(): Promise<TSdkPackage[]> {
  const found = new Map<string, TSdkPackage>();
  const queue: string[] = [...GUEST_SDK_PACKAGES];
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    if (found.has(name)) continue;
    if (!PACKAGE_NAME.test(name))
      throw new AppError("CONFIG_INVALID", `an SDK dependency has an unexpected name: ${name.slice(0, 100)}`);
    const hostDir = await fsp.realpath(path.join(PROJECT_ROOT, "node_modules", name)).catch(() => {
      throw new AppError(
        "CONFIG_INVALID",
        `the npm package ${name} (node_modules/${name}) was not found; it must be installed`,
      );
    });
    const packageJson = await fsp.readFile(path.join(hostDir, "package.json"));
    const parsed = JSON.parse(packageJson.toString("utf8")) as {
      version?: unknown;
      dependencies?: Record<string, unknown>;
    };
    found.set(name, {
      name,
      version: String(parsed.version ?? ""),
      packageJsonSha256: sha256Hex(packageJson),
      hostDir,
    });
    for (const dependency of Object.keys(parsed.dependencies ?? {})) {
      const isNested = await fsp.stat(path.join(hostDir, "node_modules", dependency)).then(
        () => true,
        () => false,
      );
      if (!isNested) queue.push(dependency);
    }
  }
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * Registers `school-core/node24` unless an identical one exists: the host's toolchain parts of
 * /usr (bin, sbin, lib, lib64, libexec, share — not /usr/local) and /bin, /sbin, /lib, /lib64
 * read-only (merged-/usr symlinks recreated as symlinks), the project's Node 24 binary
 * copied to /opt/school-core/bin/node (the project directory itself is never bound), the agent
 * SDKs bound read-only under /node_modules, and a
 * synthesized minimal /etc (passwd, group, hosts, nsswitch.conf, the loader cache and Debian's
 * /etc/alternatives links that /usr/bin points into) — never the host's /etc wholesale.
 */
export async function ensureDefaultGuestImage(
  dataDir: string,
  options: TEnsureDefaultImageOptions = {},
): Promise<TImageRecord> {
  const nodePath = await fsp
    .realpath(options.nodeBinaryPath ?? path.join(PROJECT_ROOT, "node_modules", "node", "bin", "node"))
    .catch(() => {
      throw new AppError(
        "CONFIG_INVALID",
        "the Node 24 binary (node_modules/node/bin/node) was not found; the devDependency `node` must be installed",
      );
    });
  const nodeStat = await fsp.stat(nodePath);
  const packages = await readSdkPackages();
  const provenance = {
    recipe: RECIPE_VERSION,
    nodePath,
    nodeSize: nodeStat.size,
    nodeMtimeMs: Math.trunc(nodeStat.mtimeMs),
    packages: packages.map(({ name, version, packageJsonSha256 }) => ({ name, version, packageJsonSha256 })),
  };
  const existing = latestImageRef(await readImageRefs(dataDir, DEFAULT_GUEST_IMAGE));
  if (existing && JSON.stringify(existing.provenance) === JSON.stringify(provenance)) {
    const manifest = await loadImageManifest(dataDir, existing.digest);
    if (manifest) return imageRecordOf(existing, manifest);
  }
  const builder = await ImageBuilder.open(dataDir);
  try {
    for (const hostPath of HOST_TOOLCHAIN) {
      const stat = await fsp.lstat(hostPath).catch(() => undefined);
      if (!stat) continue;
      const target = stat.isSymbolicLink() ? await fsp.readlink(hostPath) : undefined;
      // A merged-/usr link (/bin -> usr/bin) stays a link inside the guest; anything else is bound.
      if (target !== undefined && !target.startsWith("/") && path.posix.resolve("/", target).startsWith("/usr/"))
        await builder.addSymlink(hostPath.slice(1), target);
      else builder.addBind(await fsp.realpath(hostPath), hostPath);
    }
    for (const hostPath of HOST_USR_TOOLCHAIN) {
      const stat = await fsp.stat(hostPath).catch(() => undefined);
      if (stat?.isDirectory()) builder.addBind(await fsp.realpath(hostPath), hostPath);
    }
    await builder.addDir("etc");
    await builder.addFile("etc/passwd", PASSWD);
    await builder.addFile("etc/group", GROUP);
    await builder.addFile("etc/hosts", HOSTS);
    await builder.addFile("etc/hostname", "school-core-guest\n");
    await builder.addFile("etc/nsswitch.conf", NSSWITCH);
    const loaderCache = await fsp.lstat("/etc/ld.so.cache").catch(() => undefined);
    if (loaderCache?.isFile()) await builder.copyFile("etc/ld.so.cache", "/etc/ld.so.cache", 0o644);
    await builder.addDir("etc/alternatives");
    for (const name of (await fsp.readdir("/etc/alternatives").catch(() => [] as string[])).sort()) {
      const link = path.join("/etc/alternatives", name);
      const target = (await fsp.lstat(link)).isSymbolicLink() ? await fsp.readlink(link) : undefined;
      if (target && /^\/(usr|bin|sbin|lib)\//.test(target))
        await builder.addSymlink(`etc/alternatives/${name}`, target);
    }
    await builder.addDir("opt");
    await builder.addDir("opt/school-core");
    await builder.addDir("opt/school-core/bin");
    await builder.copyFile("opt/school-core/bin/node", nodePath, 0o755);
    // The SDKs: one directory of hard links bound read-only over an empty mount point, and a hashed
    // file naming versions, so a changed SDK changes the image digest (and the dispatch gate asks
    // for new probes).
    // No image directory at the mount point: a top-level image entry is mounted after a bind of the
    // same depth and would cover it; bubblewrap makes the mount point itself.
    builder.addBind(await stageSdkModules(dataDir, packages, provenance.packages), GUEST_SDK_MODULES_DIR);
    await builder.addFile(GUEST_SDK_MARKER, JSON.stringify(provenance.packages, null, 2) + "\n");
    return await builder.publish(DEFAULT_GUEST_IMAGE, provenance);
  } catch (error) {
    await builder.discard();
    throw error;
  }
}

/**
 * The SDK packages' runtime files, hard-linked (copied across filesystems) into one directory laid
 * out as a node_modules tree, under DATA_DIR and named by the packages' digests so an image always
 * binds the tree it was built with. Made once; a half-made one (a crash) is made again.
 */
async function stageSdkModules(dataDir: string, packages: TSdkPackage[], pinned: unknown): Promise<string> {
  const key = sha256Hex(Buffer.from(JSON.stringify(pinned))).slice(0, 16);
  const root = path.join(dataDir, "guest-sdk", key);
  const done = path.join(dataDir, "guest-sdk", `${key}.done`);
  if (
    await fsp.stat(done).then(
      () => true,
      () => false,
    )
  )
    return root;
  await fsp.rm(root, { recursive: true, force: true });
  await fsp.mkdir(root, { recursive: true, mode: 0o755 });
  for (const pkg of packages) await linkTree(pkg.hostDir, path.join(root, pkg.name));
  await fsp.writeFile(done, "");
  return root;
}

async function linkTree(from: string, to: string): Promise<void> {
  await fsp.mkdir(to, { recursive: true, mode: 0o755 });
  for (const entry of await fsp.readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    // A package's sources, type declarations and source maps are not needed to run it; links of
    // its own are not followed (an installed package has none worth carrying into a guest).
    if (entry.isDirectory() && entry.name !== "src") await linkTree(source, target);
    else if (entry.isFile() && !NOT_RUNTIME.test(entry.name))
      await fsp.link(source, target).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== "EXDEV" && error.code !== "EPERM") throw error;
        await fsp.copyFile(source, target);
      });
  }
}
