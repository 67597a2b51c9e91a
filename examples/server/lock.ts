import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * One reference server per DATA_DIR: a second one on the same directory would revoke
 * the owners token the first one printed (owners-token.ts) and, on SQLite, write the same file.
 * `server.lock` holds the owner's pid; a lock whose pid is no longer alive (a crash, a SIGKILL) is
 * taken over. Hosts that share a DATA_DIR on purpose (PostgreSQL with one ADMIN_TOKEN, the
 * cluster example) skip it: they neither revoke nor share a file database. Once listening, the
 * owner records its ports on the lock's second line (`listening`), so `doctor` run beside it
 * without PORT checks the ports it really uses.
 */
export function lockDataDir(dir: string): { release(): void; listening(ports: ListeningPorts): void } {
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
      const owner = readOwner(file) ?? 0;
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
  const listening = (ports: ListeningPorts): void => {
    if (readOwner(file) !== process.pid) return;
    const temporary = `${file}.${process.pid}.ports.tmp`;
    writeFileSync(temporary, `${process.pid}\n${JSON.stringify(ports)}\n`, { mode: 0o600 });
    renameSync(temporary, file);
  };
  return { release, listening };
}

/** Where the owner of a lock listens: the API's port, and the bundled integration's when it runs one. */
export interface ListeningPorts {
  port: number;
  integrationPort?: number;
}

/** The ports the live server holding `dir`'s lock recorded, or null (none running, or not listening yet). */
export function lockPorts(dir: string): ListeningPorts | null {
  const file = join(dir, "server.lock");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return null;
  }
  const [pid, second] = text.split("\n");
  if (!isAlive(Number(pid)) || !second) return null;
  try {
    const ports = JSON.parse(second) as Partial<ListeningPorts>;
    return typeof ports.port === "number" ? { port: ports.port, ...(typeof ports.integrationPort === "number" ? { integrationPort: ports.integrationPort } : {}) } : null;
  } catch {
    return null;
  }
}

/** The pid of the live server holding `dir`'s lock, or null when none does. */
export function lockOwner(dir: string): number | null {
  const owner = readOwner(join(dir, "server.lock"));
  return owner !== null && isAlive(owner) ? owner : null;
}

function readOwner(file: string): number | null {
  try {
    return Number(readFileSync(file, "utf8").split("\n")[0]!.trim());
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
