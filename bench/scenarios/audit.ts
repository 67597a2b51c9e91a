import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { toAuditRow } from "../../adapters/sql/audit-rows.js";
import { EMPTY_HEAD, linkEvent } from "../../src/storage/audit-chain.js";
import type { Storage } from "../../src/storage/types.js";
import { auditEvent } from "../../src/testing/conformance/audit.cases.js";
import { startServer, type ChildServer } from "../lib/child-server.js";
import { requestsPerSecond } from "../lib/http-load.js";
import { benchSchema, DATABASE_URL, dropSchemas } from "../lib/postgres.js";
import { alternate, series } from "../lib/stats.js";
import type { Scenario, ScenarioResult } from "./types.js";

const LIST = "/api/v2/workspaces/ws-bench/vars";

/**
 * decision D53: what recording costs a write. The same server twice, side by side in one run: with
 * its audit trail (every POST and DELETE records an event in its transaction) and without it
 * (`BENCH_AUDIT=off`). Target: the trail costs at most 10 % of the write rows' throughput.
 */
function writeWithAudit(name: string, storage: "sqlite" | "postgres"): Scenario {
  return {
    name,
    async run(samples): Promise<ScenarioResult> {
      const schemas = storage === "postgres" ? [benchSchema("audit_on"), benchSchema("audit_off")] : [];
      const start = (audit: "on" | "off", schema?: string): Promise<ChildServer> =>
        startServer(`hono-runplane-${storage}`, { BENCH_AUDIT: audit, ...(schema ? { DATABASE_URL, BENCH_PG_SCHEMA: schema } : {}) });
      const subject = await start("on", schemas[0]);
      const baseline = await start("off", schemas[1]);
      try {
        const load = (s: ChildServer) => () => writeLoad(s.url, s.info.token!);
        await load(subject)();
        await load(baseline)();
        const r = await alternate(samples, load(subject), load(baseline));
        const ratio = r.subject.median / r.baseline.median;
        return { name, unit: "req/s", ...r, ratio, target: ">= 0.90", met: ratio >= 0.9, notes: `POST+DELETE of a sensitive variable with the audit trail vs without, ${storage}` };
      } finally {
        await Promise.all([subject.stop(), baseline.stop()]);
        if (schemas.length > 0) await dropSchemas(...schemas);
      }
    },
  };
}

function writeLoad(url: string, token: string): Promise<number> {
  return requestsPerSecond({
    url,
    connections: 10,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/vnd.api+json" },
    requests: [
      {
        method: "POST",
        path: LIST,
        setupRequest: (req, context) => {
          const n = ((context.n as number | undefined) ?? 0) + 1;
          context.n = n;
          const key = `k_${process.hrtime.bigint()}_${n}`;
          return { ...req, body: JSON.stringify({ data: { type: "vars", attributes: { key, value: "secret", category: "env", sensitive: true } } }) };
        },
        onResponse: (_status, body, context) => {
          context.id = (JSON.parse(body) as { data: { id: string } }).data.id;
        },
      },
      { method: "DELETE", setupRequest: (req, context) => ({ ...req, path: `${LIST}/${String(context.id)}` }) },
    ],
  });
}

/**
 * `count` events of organization acme written straight into the file, one transaction, chained as
 * the adapter chains them (the table's trigger advances the head, decision D59).
 */
function seedEvents(path: string, count: number): void {
  const db = new Database(path);
  const insert = db.prepare(`INSERT INTO audit_events (organization, seq, id, at, body, digest) VALUES (@organization, @seq, @id, @at, @body, @digest)`);
  db.transaction(() => {
    let current = EMPTY_HEAD;
    for (let n = 1; n <= count; n++) {
      const { entry, head: next, text } = linkEvent(auditEvent(n), current);
      insert.run(toAuditRow(entry, text));
      current = next;
    }
  })();
  db.close();
}

/** Median µs of `reads` calls of one page read. */
async function pageMicros(storage: Storage, offset: number, since: number | undefined, reads: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < reads; i++) {
    const t = performance.now();
    await storage.audit!.list("acme", { offset, limit: 1000, ...(since === undefined ? {} : { sinceMs: since }) });
    out.push((performance.now() - t) * 1000);
  }
  return out;
}

/**
 * decision D53: the audit list reads by index. Page 1 and the last page of 1,000 events, and a
 * `since` in the middle, over a million events of one organization against the same over 10,000
 * (SQLite file). Target: at most 1.5x.
 */
const listAtScale: Scenario = {
  name: "Audit list, 1M events",
  async run(samples): Promise<ScenarioResult[]> {
    const dir = mkdtempSync(join(tmpdir(), "rp-bench-audit-"));
    try {
      const open = (count: number): Storage => {
        const path = join(dir, `audit-${count}.db`);
        createSqliteStorage(new Database(path)).close(); // migrate
        seedEvents(path, count);
        return createSqliteStorage(new Database(path));
      };
      const small = open(10_000);
      const large = open(1_000_000);
      const reads = Math.max(20, samples * 10);
      const rows: ScenarioResult[] = [];
      const T0 = Date.UTC(2026, 0, 1);
      const cases: [string, (count: number) => [number, number | undefined]][] = [
        ["page 1", () => [0, undefined]],
        ["last page", (count) => [count - 1000, undefined]],
        ["since, middle", (count) => [0, T0 + (count / 2) * 1000]],
      ];
      for (const [label, at] of cases) {
        const [smallOffset, smallSince] = at(10_000);
        const [largeOffset, largeSince] = at(1_000_000);
        const subject = series(await pageMicros(large, largeOffset, largeSince, reads));
        const baseline = series(await pageMicros(small, smallOffset, smallSince, reads));
        const ratio = subject.median / baseline.median;
        rows.push({ name: `Audit list, 1M events: ${label}`, unit: "µs", subject, baseline, ratio, target: "<= 1.50", met: ratio <= 1.5, notes: "1,000 events a page, 1M vs 10k events of one organization, SQLite file" });
      }
      await small.close();
      await large.close();
      return rows;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export const scenarios: Scenario[] = [writeWithAudit("HTTP write, audit trail", "sqlite"), writeWithAudit("HTTP write, audit trail, PostgreSQL", "postgres"), listAtScale];
