import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { settingName } from "../../src/cli/args.js";
import type { CheckInput, Verdict } from "./check-types.js";

const WRITABLE = `make it writable, or point ${settingName("DATA_DIR")} at a writable directory`;

/**
 * The data directory: private, unlocked, and writable. A read-only one (a read-only volume, or a
 * directory this user may not write) is named here, before SQLite or the keyring file fail on it
 * with words that do not say which directory (SQLite's "unable to open database file").
 */
export async function dataDirectory({ config }: CheckInput): Promise<Verdict> {
  const dir = config.dataDir;
  if (!existsSync(dir)) {
    const blocked = readOnlyReason(nearestExisting(dir));
    if (blocked) return { fix: `data directory ${dir} cannot be created: ${nearestExisting(dir)} is read-only (${blocked}): ${WRITABLE}` };
    return { note: `${dir} does not exist yet (the first start creates it, mode 0700)` };
  }
  if (!statSync(dir).isDirectory()) return { fix: `${dir} is not a directory: point ${settingName("DATA_DIR")} elsewhere` };
  const blocked = readOnlyReason(dir) ?? readOnlyFile(dir);
  if (blocked) return { fix: `data directory ${dir} is read-only (${blocked}): ${WRITABLE}` };
  const loose = readdirSync(dir).filter((name) => statSync(join(dir, name)).isFile() && (statSync(join(dir, name)).mode & 0o077) !== 0);
  const lock = join(dir, "server.lock");
  // The pid is the first line; a listening server adds its ports on the second.
  const owner = existsSync(lock) ? readFileSync(lock, "utf8").split("\n")[0]!.trim() : null;
  const notes = [(statSync(dir).mode & 0o077) !== 0 || loose.length ? "looser than 0700/0600 (the next start tightens it)" : "private (0700/0600)"];
  if (owner) notes.push(`lock held by pid ${owner}`);
  return { note: `${dir}, ${notes.join(", ")}` };
}

/** Whether `dir` is read-only for this process; `access` sees a read-only mount even for root. */
export function readOnlyReason(path: string): string | null {
  try {
    accessSync(path, constants.W_OK);
    return null;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "EROFS") return "a read-only file system";
    if (code === "EACCES" || code === "EPERM") return "this user may not write it";
    return null;
  }
}

/** The database and the files next to it that a start writes, when one of them is read-only. */
function readOnlyFile(dir: string): string | null {
  for (const name of ["runplane.db", "runplane.db-wal", "runplane.db-shm", "keyring.json", "server-state.json"]) {
    const file = join(dir, name);
    const reason = existsSync(file) ? readOnlyReason(file) : null;
    if (reason) return `${name}: ${reason}`;
  }
  return null;
}

function nearestExisting(path: string): string {
  let at = dirname(path);
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  return at;
}
