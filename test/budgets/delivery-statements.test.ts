import { describe, expect, it } from "vitest";
import { createDispatcher, createKeyring, generateKey } from "../../src/index.js";
import { answering200, createTestApp } from "../helpers/app.js";
import { postgresReachable } from "../helpers/postgres.js";
import { attachTask, createTask } from "../helpers/run-tasks.js";
import { countedPostgres, countedSqlite, countedSqliteThread, measured, type CountedStorage } from "./counted-storages.js";

/**
 * decision D56: the statements one delivery costs on SQL storage, from `startStage` to
 * the 200 of a fake transport, in steady state (a warm-up batch first). Each run has 10 mandatory
 * tasks, so 20 runs are 200 deliveries: the 1,000 deliveries of 100 runs of the performance work, scaled down
 * (the count per delivery is the same once the dispatcher's claims are full).
 *
 * The budgets are the counts measured today, so a change that adds a statement per delivery fails
 * here. The target is at most 3 statements per delivery, met on every storage since decision D57:
 * a stage's run tasks are read in one statement, and on SQLite a stage start writes its results,
 * outbox rows and payloads in one statement each and a settle batch its rows, attempts and result
 * advances in one each (PostgreSQL composes the same statements into one per step). What is left
 * per stage (its stage, run, workspace, results and tasks read, and its writes) is shared by its 10
 * deliveries. Lower a budget when a change lowers the count (the test prints it);
 * `BUDGET_TEXTS=1` also prints which statements ran and how often.
 */
const TASKS = 10;
const RUNS = 20;
/**
 * Today's statements and transactions per delivery (D57; before it SQLite 7.555 in every mode,
 * PostgreSQL 1.095 together and 1.565 alone); less than 0.5 apart from what is measured.
 */
const BUDGET = {
  sqlite: { together: { statements: 0.985, transactions: 0.04 }, alone: { statements: 0.985, transactions: 0.135 } },
  "sqlite writer thread": { together: { statements: 0.985, transactions: 0.045 }, alone: { statements: 0.985, transactions: 0.135 } },
  postgres: { together: { statements: 0.095, transactions: 0.025 }, alone: { statements: 0.665, transactions: 0.025 } },
};
/** The target: at most 3 statements per delivery. */
const TARGET = 3;

/**
 * `together`: the stages start at once and the fake transport answers at once, so the adapter's
 * write groups batch as far as they can (a bound below what a real network allows). `alone`: the
 * stages start one after the other and the dispatcher sends one request at a time, so only what the
 * adapter gathers by itself is batched (the claim; on PostgreSQL also a tick's closes).
 */
type Mode = "together" | "alone";
const SLACK = 0.5;

async function deliveryCost(counted: CountedStorage, mode: Mode) {
  const keyring = createKeyring({ keys: [{ id: "k1", key: generateKey() }] });
  const transport = answering200();
  const app = await createTestApp({ storage: counted.storage, keyring, transport, publicUrl: "https://runplane.example" });
  for (let i = 0; i < TASKS; i++) await attachTask(app, await createTask(app, `task${i}`), "mandatory");
  const dispatcher = createDispatcher(app.runplane, { random: () => 0, owner: "budget", ...(mode === "alone" ? { concurrency: 1 } : {}) });
  const batch = async (watch: boolean) => {
    const runs: string[] = [];
    for (let i = 0; i < RUNS; i++) runs.push((await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "budget" })).run.id);
    const sentBefore = transport.sent.length;
    if (watch && process.env.BUDGET_TEXTS) counted.count.texts = new Map();
    const { cost } = await measured(counted.count, async () => {
      if (mode === "together") await Promise.all(runs.map((id) => app.runplane.runTasks.startStage(id, "post_plan")));
      else for (const id of runs) await app.runplane.runTasks.startStage(id, "post_plan");
      let delivered = 0;
      // Bounded: each tick claims a full batch; far fewer than 50 ticks deliver 200 rows.
      for (let tick = 0; tick < 50 && delivered < RUNS * TASKS; tick++) delivered += (await dispatcher.tick()).delivered;
      expect(delivered).toBe(RUNS * TASKS);
    });
    expect(transport.sent.length - sentBefore).toBe(RUNS * TASKS);
    return cost;
  };
  await batch(false); // warm-up: prepared statements, caches, the first claim
  const cost = await batch(true);
  await app.runplane.close();
  const texts = counted.count.texts;
  counted.count.texts = undefined; // closing is not part of the budget
  if (texts) for (const [text, n] of texts) console.log(`${n}\t${text.replace(/\s+/g, " ").slice(0, 160)}`);
  const per = (n: number) => n / (RUNS * TASKS);
  return { statements: per(cost.statements), transactions: per(cost.transactions), control: per(cost.control) };
}

function budgetCase(name: keyof typeof BUDGET, mode: Mode, open: () => Promise<CountedStorage>) {
  const target = BUDGET[name][mode].statements <= TARGET ? "within it by count" : "not yet met";
  it(`${name}, ${mode}: statements per delivery stay within today's budget (target <= ${TARGET}: ${target})`, async () => {
    const counted = await open();
    try {
      const cost = await deliveryCost(counted, mode);
      console.log(`statement budget, delivery, ${name}, ${mode}: ${JSON.stringify(cost)} per delivery (target <= 3 statements)`);
      expect(cost.statements).toBeLessThanOrEqual(BUDGET[name][mode].statements + SLACK);
      expect(cost.statements).toBeLessThanOrEqual(TARGET);
      expect(cost.transactions).toBeLessThanOrEqual(BUDGET[name][mode].transactions + SLACK);
    } finally {
      await counted.dispose();
    }
  }, 60_000);
}

describe("statement budget per delivery (decision D56)", () => {
  for (const mode of ["together", "alone"] as const) budgetCase("sqlite", mode, async () => countedSqlite());
  for (const mode of ["together", "alone"] as const) budgetCase("sqlite writer thread", mode, countedSqliteThread);
});

if (await postgresReachable("statement budget per delivery")) {
  describe("statement budget per delivery on PostgreSQL (decision D56)", () => {
    for (const mode of ["together", "alone"] as const) budgetCase("postgres", mode, () => countedPostgres("budget_dlv"));
  });
}
