import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { MEASURED_GRANTS, MEASURED_RESULTS_PER_STAGE, MEASURED_STAGES, seedScaleFile, type ScaleFile } from "../lib/seed-scale.js";
import { series, type Series } from "../lib/stats.js";
import type { Scenario, ScenarioResult } from "./types.js";

/**
 * Scale: one list read with 100, 10,000 and 1,000,000 rows in its table (task_stages, resp.
 * team_projects, across the whole SQLite file) while the list itself keeps a realistic size. A
 * sample is the median latency of REQUESTS sequential in-process `runplane.handler` calls; the
 * three sizes are sampled in turn so drift on the shared machine hits each alike.
 */
const SIZES = (process.env.BENCH_SCALE_ROWS ?? "100,10000,1000000").split(",").map(Number);
const REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS ?? 2000);
const WARMUP = 300;

interface List {
  name: string;
  path: (f: ScaleFile) => string;
  /** Throws unless the response is the list the file was seeded with. */
  check: (body: ListBody) => void;
}

interface ListBody {
  data: { id: string; attributes: Record<string, unknown>; relationships?: Record<string, { data?: unknown[] }> }[];
  meta: { pagination: Record<string, number | null> };
}

function expect(condition: boolean, what: string): void {
  if (!condition) throw new Error(`Scale: seeded data reads back wrong: ${what}`);
}

const stagePage = (page: number): List["check"] => (body) => {
  expect(body.data.length === 1, `page ${page} holds ${body.data.length} stages, not 1`);
  expect(body.meta.pagination["total-count"] === MEASURED_STAGES, `total-count ${body.meta.pagination["total-count"]}`);
  expect(body.data[0]!.attributes.stage === ["pre_plan", "post_plan", "pre_apply", "post_apply"][page - 1], `page ${page} stage`);
  const results = body.data[0]!.relationships?.["task-results"]?.data ?? [];
  expect(results.length === MEASURED_RESULTS_PER_STAGE, `${results.length} task-results on the stage`);
};

const LISTS: List[] = [
  { name: "Scale: task-stages page 1", path: (f) => `/api/v2/runs/${f.runId}/task-stages?page%5Bsize%5D=1`, check: stagePage(1) },
  {
    name: "Scale: task-stages last page",
    path: (f) => `/api/v2/runs/${f.runId}/task-stages?page%5Bsize%5D=1&page%5Bnumber%5D=${MEASURED_STAGES}`,
    check: stagePage(MEASURED_STAGES),
  },
  {
    name: "Scale: team-projects list",
    path: (f) => `/api/v2/team-projects?filter%5Bproject%5D%5Bid%5D=${f.projectId}`,
    check: (body) => {
      expect(body.data.length === MEASURED_GRANTS, `${body.data.length} grants listed`);
      expect(body.meta.pagination["total-count"] === MEASURED_GRANTS, `total-count ${body.meta.pagination["total-count"]}`);
    },
  },
];

// Seeded once per process for all three lists; the files go when the process does.
let seeded: Promise<ScaleFile[]> | undefined;
function scaleFiles(): Promise<ScaleFile[]> {
  if (!seeded) {
    const dir = mkdtempSync(join(tmpdir(), "rp-bench-scale-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    seeded = (async () => {
      const files: ScaleFile[] = [];
      for (const rows of SIZES) {
        const started = performance.now();
        files.push(await seedScaleFile(join(dir, `scale-${rows}.db`), rows, generateKey()));
        process.stderr.write(`bench: seeded ${rows.toLocaleString("en-US")} rows in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
      }
      return files;
    })();
  }
  return seeded;
}

/** Opens a seeded file the way a host would: the adapter over a better-sqlite3 connection. */
function open(file: ScaleFile) {
  const runplane = createRunplane({
    storage: createSqliteStorage(new Database(file.path)),
    logger: silentLogger,
    keyring: { keys: [{ id: "k", key: file.keyringKey }] },
  });
  const headers = { authorization: `Bearer ${file.token}` };
  const get = async (path: string): Promise<Response> => runplane.handler(new Request(`http://127.0.0.1${path}`, { headers }));
  return { runplane, get };
}

/** Median microseconds of `count` sequential requests, each read to its last byte. */
async function medianLatency(get: (path: string) => Promise<Response>, path: string, count: number): Promise<number> {
  const times = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const started = process.hrtime.bigint();
    const response = await get(path);
    await response.arrayBuffer();
    times[i] = Number(process.hrtime.bigint() - started) / 1000;
    if (response.status !== 200) throw new Error(`Scale: ${path} answered ${response.status}`);
  }
  return series(Array.from(times)).median;
}

function scaleScenario(list: List): Scenario {
  return {
    name: list.name,
    async run(samples): Promise<ScenarioResult> {
      const files = await scaleFiles();
      const opened = files.map(open);
      try {
        const paths = files.map(list.path);
        for (const [i, { get }] of opened.entries()) {
          const response = await get(paths[i]!);
          expect(response.status === 200, `${paths[i]} answered ${response.status}`);
          list.check((await response.json()) as ListBody);
          await medianLatency(get, paths[i]!, WARMUP);
        }
        const perSize: number[][] = files.map(() => []);
        for (let s = 0; s < samples; s++) {
          // The starting size rotates, so no size always runs right after another's cache misses.
          for (let j = 0; j < files.length; j++) {
            const i = (s + j) % files.length;
            perSize[i]!.push(await medianLatency(opened[i]!.get, paths[i]!, REQUESTS));
          }
        }
        const bySize: Series[] = perSize.map(series);
        const baseline = bySize[0]!;
        const subject = bySize[bySize.length - 1]!;
        const ratio = subject.median / baseline.median;
        const middle = files
          .slice(1, -1)
          .map((f, i) => `${f.rows.toLocaleString("en-US")} rows: ${bySize[i + 1]!.median.toFixed(0)} µs (${bySize[i + 1]!.min.toFixed(0)}-${bySize[i + 1]!.max.toFixed(0)})`);
        return {
          name: list.name,
          unit: "µs/req",
          subject,
          baseline,
          ratio,
          target: "<= 1.5",
          met: ratio <= 1.5,
          notes: [
            `subject ${files.at(-1)!.rows.toLocaleString("en-US")} rows, baseline ${files[0]!.rows.toLocaleString("en-US")} rows in the table`,
            ...middle,
            `median of ${REQUESTS} sequential in-process requests per sample, SQLite file`,
          ].join("; "),
        };
      } finally {
        await Promise.all(opened.map(({ runplane }) => runplane.close()));
      }
    },
  };
}

export const scenarios: Scenario[] = LISTS.map(scaleScenario);
