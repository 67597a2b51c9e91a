import type { WorkerUtils } from "graphile-worker";
import { newId } from "../../src/crypto/random.js";
import type { ControlRoutes } from "./control.js";
import { peerTableDdl, type PeerJob, type PeerRun } from "./peer-task.js";

/**
 * The driving side of the peer on one bench host (bench/servers/postgres-host.ts): `peer-prepare`
 * stores the pending results of `runs` runs (untimed, as runplane's `prepare` creates its runs);
 * `peer` then enqueues each run's jobs with one `addJobs`, all runs at once, the way a stage start
 * would, and answers when it began.
 */
export function peerHost(options: { utils: WorkerUtils; schema: string; tasks: number; now: () => number }) {
  const table = `"${options.schema}".task_results`;
  let prepared: { run: PeerRun; results: string[] }[] = [];

  const routes: ControlRoutes = {
    "/bench/peer-prepare": async ({ runs = 500 }) => {
      prepared = Array.from({ length: runs }, () => ({
        run: {
          id: newId("run"),
          createdAt: new Date().toISOString(),
          createdBy: "user-bench",
          message: "bench run",
          isSpeculative: false,
          planId: newId("plan"),
          configurationVersionId: "cv-bench",
        },
        results: Array.from({ length: options.tasks }, () => newId("taskrs")),
      }));
      const rows = prepared.flatMap(({ run, results }) => results.map((id, position) => ({ id, runId: run.id, position })));
      await options.utils.withPgClient((client) =>
        client.query(`INSERT INTO ${table} (id, run_id, position, status) SELECT id, run_id, position, 'pending' FROM unnest($1::text[], $2::text[], $3::int[]) AS r(id, run_id, position)`, [
          rows.map((r) => r.id),
          rows.map((r) => r.runId),
          rows.map((r) => r.position),
        ]),
      );
      return { runs: prepared.length };
    },
    "/bench/peer": async () => {
      const t0 = options.now();
      const job = (run: PeerRun, resultId: string, task: number) => ({ identifier: "run-task", payload: { resultId, task, run } satisfies PeerJob });
      await Promise.all(prepared.map(({ run, results }) => options.utils.addJobs(results.map((id, task) => job(run, id, task)))));
      return { t0, startedMs: options.now() - t0, deliveries: prepared.length * options.tasks };
    },
  };

  return {
    table,
    routes,
    /** The seeding host creates the schema and table before the other hosts start. */
    createTable: () => options.utils.withPgClient(async (client) => void (await client.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"; ${peerTableDdl(table)}`))),
  };
}
