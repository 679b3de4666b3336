/**
 * Where an operator's credential files may live (issue 27, item 5). A setting names a file whose
 * contents are sent as a header to the endpoint the same setting names (the relay upstream's
 * credentialFile, the publication tokenFile); if that file could be anywhere, an operator — or
 * whoever holds an operator session — could point it at the project's own secrets (the session-
 * signing secret, the database password, the substrate or forge admin token) and the endpoint at
 * their own host, then press "Test upstream". So a credential file must be a regular file inside
 * DATA_DIR/credentials/ (created 0700), by its real path (a symlink that leaves the directory is
 * refused), and never one of the project's own secret files (compared by inode, so a hard link is
 * refused too). Checked when the setting is written and again every time the file is read: a
 * value stored before, or a file swapped since, is refused when used.
 */
import fs from "node:fs";
import path from "node:path";
import { AppError } from "../errors";
import { sanitizeExcerpt } from "../redact";

export const CREDENTIALS_DIR_NAME = "credentials";

export function credentialsDirOf(dataDir: string): string {
  return path.join(path.resolve(dataDir), CREDENTIALS_DIR_NAME);
}

/** Creates DATA_DIR/credentials/ (0700) if absent; returns its path. */
export function ensureCredentialsDir(dataDir: string): string {
  const dir = credentialsDirOf(dataDir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  return dir;
}

/**
 * The project's own secrets under DATA_DIR: never a credential, wherever a link to them sits.
 * DATA_DIR/secrets/ holds the substrate, forge-admin and metrics tokens; the others sit at the top.
 */
function projectSecretFiles(dataDir: string): string[] {
  const root = path.resolve(dataDir);
  const secretsDir = path.join(root, "secrets");
  let inSecrets: string[] = [];
  try {
    inSecrets = fs.readdirSync(secretsDir).map((name) => path.join(secretsDir, name));
  } catch {
    inSecrets = [];
  }
  return [
    path.join(root, "nextauth-secret"),
    path.join(root, "postgres-password"),
    path.join(root, "smolcloud-token"),
    path.join(root, "demo-credentials.txt"),
    ...inSecrets,
  ];
}

function refuse(file: string, why: string): AppError {
  return new AppError(
    "CREDENTIAL_FILE_REFUSED",
    `The credential file ${sanitizeExcerpt(file, 256)} is refused: ${why}. Put credential files in DATA_DIR/${CREDENTIALS_DIR_NAME}/.`,
    { why },
  );
}

function isInside(dir: string, file: string): boolean {
  const relative = path.relative(dir, file);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}

/**
 * Write time: the path must be absolute and inside DATA_DIR/credentials/ as written; if the file
 * exists already, the use-time check runs on it too. Returns the refusal, or null.
 */
export function checkCredentialFilePath(file: string, dataDir: string): AppError | null {
  if (!path.isAbsolute(file)) return refuse(file, "it is not an absolute path");
  if (!isInside(credentialsDirOf(dataDir), path.resolve(file)))
    return refuse(file, `it is not inside DATA_DIR/${CREDENTIALS_DIR_NAME}/`);
  // Not there yet (the operator writes the file next): the rest is checked when it is used.
  if (!fs.existsSync(file)) return null;
  try {
    fs.closeSync(openCredentialFile(file, dataDir));
    return null;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

/**
 * Use time: opens the credential file for reading after checking it, and returns the descriptor
 * (the caller reads and closes it). What is checked is what is opened: the real path is opened
 * with O_NOFOLLOW, and the descriptor's own inode is compared with the project's secrets.
 * Synchronous on purpose: the relay reads its credential on every call, and a few stat calls on a
 * local disk cost microseconds where thread-pool round trips cost a tenth of a millisecond each.
 */
export function openCredentialFile(file: string, dataDir: string): number {
  if (!path.isAbsolute(file)) throw refuse(file, "it is not an absolute path");
  const dir = credentialsDirOf(dataDir);
  if (!isInside(dir, path.resolve(file))) throw refuse(file, `it is not inside DATA_DIR/${CREDENTIALS_DIR_NAME}/`);
  let realDir: string;
  let realFile: string;
  try {
    // The directory itself must be a directory, not a link to somewhere else (DATA_DIR/secrets, /).
    if (!fs.lstatSync(dir).isDirectory()) throw refuse(file, `DATA_DIR/${CREDENTIALS_DIR_NAME} is not a directory`);
    realDir = fs.realpathSync(dir);
    realFile = fs.realpathSync(file);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw refuse(file, `it cannot be resolved (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`);
  }
  if (!isInside(realDir, realFile)) throw refuse(file, `its real path is not inside DATA_DIR/${CREDENTIALS_DIR_NAME}/`);
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO swapped in must not hang the caller (fstat refuses it next).
    fd = fs.openSync(realFile, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (error) {
    throw refuse(file, `it cannot be opened (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw refuse(file, "it is not a regular file");
    for (const secret of projectSecretFiles(dataDir)) {
      const other = fs.statSync(secret, { throwIfNoEntry: false });
      if (other && other.dev === stat.dev && other.ino === stat.ino)
        throw refuse(file, "it is one of School-Core's own secrets");
    }
    return fd;
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}
