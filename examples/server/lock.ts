import { linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * One reference server per DATA_DIR: a second one on the same directory would revoke
 * the owners token the first one printed (owners-token.ts) and, on SQLite, write the same file.
 * `server.lock` holds the owner's pid; a lock whose pid is no longer alive (a crash, a SIGKILL) is
 * taken over. Hosts that share a DATA_DIR on purpose (PostgreSQL with one ADMIN_TOKEN, the
 * cluster example) skip it: they neither revoke nor share a file database.
 */
export function lockDataDir(dir: string): { release(): void } {
  const file = join(dir, "server.lock");
  for (let attempt = 0; ; attempt++) {
    // Written whole under a private name and linked into place: a reader never sees an empty lock.
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, String(process.pid), { mode: 0o600 });
    try {
      linkSync(temporary, file);
      break;
    } catch (error) {
      if ((error as { code?: unknown }).code !== "EEXIST") throw error;
      const owner = Number(readFileSync(file, "utf8").trim());
      if (attempt === 0 && !isAlive(owner)) {
        rmSync(file, { force: true });
        continue;
      }
      throw new Error(`data directory ${dir} is locked by another runplane server (pid ${owner || "unknown"}): stop it, or use another --data-dir`);
    } finally {
      rmSync(temporary, { force: true });
    }
  }
  const release = (): void => {
    // Only our own lock: a server that took over a stale lock must keep its own.
    if (readOwner(file) === process.pid) rmSync(file, { force: true });
  };
  process.once("exit", release);
  return { release };
}

/** The pid of the live server holding `dir`'s lock, or null when none does. */
export function lockOwner(dir: string): number | null {
  const owner = readOwner(join(dir, "server.lock"));
  return owner !== null && isAlive(owner) ? owner : null;
}

function readOwner(file: string): number | null {
  try {
    return Number(readFileSync(file, "utf8").trim());
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, owned by another user.
    return (error as { code?: unknown }).code === "EPERM";
  }
}
