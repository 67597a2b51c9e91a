import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { rid } from "../../src/testing/conformance/run-task-fixtures.js";

// Decision D37: SIGKILL while the writer thread is busy with group commits loses no acknowledged
// write and applies no write half. The child keeps 32 run creations in flight on a file on the
// disk (not tmpfs: real fsyncs, so groups form) and is killed after a different number of
// acknowledgements each round; the file is then opened by a fresh connection, as a restart would.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CHILD = fileURLToPath(new URL("./fixtures/writer-kill-child.ts", import.meta.url));

interface Killed {
  acked: number[];
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Runs the child until it acknowledged `after` writes, then SIGKILLs it; every ack it printed. */
function writeThenKill(path: string, after: number): Promise<Killed> {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD], { cwd: ROOT, env: { ...process.env, RUNPLANE_DB: path }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let stderr = "";
  let killed = false;
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    if (!killed && out.split("\n").filter((line) => line.startsWith("ack ")).length >= after) {
      killed = true;
      child.kill("SIGKILL");
    }
  });
  return new Promise((resolve) =>
    child.once("close", (_code, signal) => {
      const acked = out.split("\n").flatMap((line) => (line.startsWith("ack ") ? [Number(line.slice(4))] : []));
      resolve({ acked, signal, stderr });
    }),
  );
}

let dir = "";
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("sqlite writer thread: SIGKILL during busy group commits", () => {
  it.each([150, 600, 1500])("keeps every write acknowledged before a kill after %i acks, and no run without all its rows", async (after) => {
    dir = await mkdtemp(join(tmpdir(), "runplane-writer-kill-"));
    const path = join(dir, "runplane.db");
    const killed = await writeThenKill(path, after);
    expect(killed.signal, killed.stderr).toBe("SIGKILL");
    expect(killed.acked.length).toBeGreaterThanOrEqual(after);

    const db = new Database(path); // a new connection recovers the WAL as a restarted host would
    try {
      const ids = (sql: string) => new Set((db.prepare(sql).all() as { id: string }[]).map((r) => r.id));
      const runs = ids("SELECT id FROM runs");
      const lost = killed.acked.filter((n) => !runs.has(rid("run", n)));
      expect(lost, "acknowledged runs missing after the kill").toStrictEqual([]);
      // All or nothing per primitive: every stored run has both its stages and its three results,
      // and no stage or result exists without its run.
      const counts = db
        .prepare(
          `SELECT r.id, (SELECT count(*) FROM task_stages s WHERE s.run_id = r.id) AS stages,
                  (SELECT count(*) FROM task_results t WHERE t.run_id = r.id) AS results FROM runs r`,
        )
        .all() as { id: string; stages: number; results: number }[];
      expect(counts.filter((c) => c.stages !== 2 || c.results !== 3)).toStrictEqual([]);
      const orphans = db.prepare("SELECT (SELECT count(*) FROM task_stages WHERE run_id NOT IN (SELECT id FROM runs)) + (SELECT count(*) FROM task_results WHERE run_id NOT IN (SELECT id FROM runs)) AS n").get() as { n: number };
      expect(orphans.n).toBe(0);
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      db.close();
    }
  });
});
