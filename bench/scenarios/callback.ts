import Database from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { startServer } from "../lib/child-server.js";
import { requestsPerSecond } from "../lib/http-load.js";
import { callbackBody, outcomeColumns } from "../lib/run-task-fixtures.js";
import { alternate } from "../lib/stats.js";
import type { Scenario, ScenarioResult } from "./types.js";

const SERVER = fileURLToPath(new URL("../servers/run-tasks-server.ts", import.meta.url));
const OUTCOMES = 10;
const CONNECTIONS = 10;
const SECONDS = 2;
/**
 * Distinct results the server prepares (every callback needs its own) and pending rows the raw
 * baseline updates, each sized for a rate well above what 2 cores reach. A subject pool that runs
 * dry answers 409s, which fail the run rather than measure the wrong thing.
 */
const resultsFor = (samples: number): number => Math.ceil(samples * SECONDS * 1200 * 1.25);
const rawRowsFor = (samples: number): number => samples * SECONDS * 6000;

/** One prepared result: its id, its access token and its enforcement level. */
interface PoolEntry {
  id: string;
  token: string;
  level: string;
}

const readPool = (file: string): PoolEntry[] =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => {
      const [id, token, level] = line.split(" ") as [string, string, string];
      return { id, token, level };
    });

/** Callbacks/s over HTTP: each request takes the next unused result and its own access token. */
function subjectLoad(url: string, pool: PoolEntry[]): () => Promise<number> {
  const bodies = { passed: callbackBody("passed", OUTCOMES), failed: callbackBody("failed", OUTCOMES) };
  let next = 0;
  return async () => {
    try {
      return await requestsPerSecond({
        url,
        connections: CONNECTIONS,
        durationSeconds: SECONDS,
        requests: [
          {
            method: "PATCH",
            setupRequest: (req) => {
              // Past the pool's end a used result answers 409, which fails the load run.
              const r = pool[next++] ?? pool[0]!;
              return {
                ...req,
                path: `/api/v2/task-results/${r.id}/callback`,
                headers: { authorization: `Bearer ${r.token}`, "content-type": "application/vnd.api+json" },
                // The advisory task fails, the mandatory one passes: the stage still passes (D13).
                body: r.level === "advisory" ? bodies.failed : bodies.passed,
              };
            },
          },
        ],
      });
    } catch (error) {
      if (next > pool.length) throw new Error(`callback pool of ${pool.length} results ran dry: raise resultsFor()`);
      throw error;
    }
  };
}

/**
 * The floor under one callback: the adapter's own schema and pragmas (WAL, synchronous=FULL,
 * foreign_keys, BEGIN IMMEDIATE) on a SQLite file, one transaction that updates a pending result
 * row and inserts the 10 outcome rows the adapter writes for the same body, with ids of the same
 * shape (16 random characters, D9: they land on random index pages, as the library's do).
 * Transactions/s.
 */
function rawBaseline(rows: number): { load: () => Promise<number>; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), "rp-bench-raw-"));
  const db = new Database(join(dir, "raw.db"));
  createSqliteStorage(db); // pragmas and migrations exactly as the adapter sets them
  const now = new Date().toISOString();
  const randomId = (prefix: string): string => `${prefix}-${randomBytes(12).toString("base64url")}`;
  const ids = Array.from({ length: rows }, () => randomId("taskrs"));
  const insertResult = db.prepare(`INSERT INTO task_results (id, stage_id, run_id, workspace_id, organization, stage, position, status,
    status_timestamps, task_id, task_name, task_url, workspace_task_id, enforcement_level, is_speculative, outcomes_count,
    access_token_digest, version, created_at, updated_at)
    VALUES (?, ?, ?, 'ws-bench', 'bench', 'post_plan', ?, 'pending', '{}', 'task-1', 'scanner', 'http://127.0.0.1:9/hook', 'wstask-1',
    'mandatory', 0, 0, ?, 2, ?, ?)`);
  db.transaction(() => {
    for (let i = 0; i < rows; i++) insertResult.run(ids[i], `ts-raw${i >> 1}`, `run-raw${i >> 1}`, i % 2, randomBytes(32).toString("hex"), now, now);
  }).immediate();

  const update = db.prepare(`UPDATE task_results SET status = ?, message = ?, url = ?, status_timestamps = ?, outcomes_count = ?,
    version = version + 1, updated_at = ? WHERE id = ? AND version = ? AND status IN ('pending', 'running')`);
  const insertOutcome = db.prepare(`INSERT INTO task_result_outcomes (id, task_result_id, position, outcome_id, description, body, url,
    tags, severity_label, severity_rank, status_label, created_at)
    VALUES (@id, @task_result_id, @position, @outcome_id, @description, @body, @url, @tags, @severity_label, @severity_rank, @status_label, @created_at)`);
  const columns = Array.from({ length: OUTCOMES }, (_, i) => outcomeColumns(i));
  const callback = db.transaction((n: number) => {
    const id = ids[n];
    if (id === undefined) throw new Error(`raw baseline ran out of pending rows at ${n}`);
    const at = new Date().toISOString();
    if (update.run("passed", `${OUTCOMES} checks, passed`, "https://scanner.example/runs/1", `{"passed-at":"${at}"}`, OUTCOMES, at, id, 2).changes !== 1) {
      throw new Error(`raw baseline row ${id} was not pending`);
    }
    for (let p = 0; p < OUTCOMES; p++) insertOutcome.run({ ...columns[p]!, id: randomId("tro"), task_result_id: id, position: p, created_at: at });
  });

  let n = 0;
  return {
    async load() {
      const end = performance.now() + SECONDS * 1000;
      const start = performance.now();
      const first = n;
      while (performance.now() < end) callback.immediate(n++);
      return (n - first) / ((performance.now() - start) / 1000);
    },
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** PATCH .../callback with 10 outcomes over HTTP (SQLite file) against the raw SQL floor of the same writes. */
const callbackIngest: Scenario = {
  name: "Callback ingest",
  async run(samples): Promise<ScenarioResult> {
    const results = resultsFor(samples);
    const server = await startServer("callback", { CALLBACK_RUNS: String(Math.ceil(results / 2)) }, SERVER);
    let raw: ReturnType<typeof rawBaseline> | undefined;
    try {
      raw = rawBaseline(rawRowsFor(samples));
      const pool = readPool(server.info.tokens!);
      const r = await alternate(samples, subjectLoad(server.url, pool), raw.load);
      const ratio = r.subject.median / r.baseline.median;
      return {
        name: "Callback ingest",
        unit: "callbacks/s",
        ...r,
        ratio,
        target: ">= 0.50",
        met: ratio >= 0.5,
        notes:
          `${OUTCOMES} outcomes per callback (${callbackBody("passed", OUTCOMES).length} B body), ${CONNECTIONS} connections, ${SECONDS} s per sample, ` +
          `each to a distinct pending result of a run with 2 tasks (${pool.length} prepared in ${server.info.seedMs} ms); ` +
          `baseline: raw better-sqlite3 UPDATE + ${OUTCOMES} INSERTs per transaction (same schema, pragmas and id shape, synchronous=FULL), in the bench process`,
      };
    } finally {
      raw?.close();
      await server.stop();
    }
  },
};

export const scenarios: Scenario[] = [callbackIngest];
