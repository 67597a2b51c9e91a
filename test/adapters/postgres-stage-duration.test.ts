import pg from "pg";
import { describe, expect, it } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { createConsoleLogger, createRunplane } from "../../src/index.js";
import { manualClock, START } from "../delivery/support.js";
import { createTestApp } from "../helpers/app.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";

// Decision D27: the stage's start instant comes from the shared database, not from the
// memory of the host that started it, so a stage another host ends is measured to the millisecond.

const reachable = await postgresReachable("postgres stage duration");

describe.skipIf(!reachable)("runplane: stage durations across hosts sharing one database", () => {
  it("measures a stage one host started and another canceled 36 ms later to the millisecond", async () => {
    const schema = uniqueSchema("stage_duration");
    const storageA = await createPostgresStorage(DATABASE_URL, { schema });
    const storageB = await createPostgresStorage(DATABASE_URL, { schema });
    const a = await createTestApp({ storage: storageA, clock: manualClock(START) });
    const lines: Record<string, unknown>[] = [];
    const b = createRunplane({
      storage: storageB,
      clock: manualClock(START + 36),
      logger: createConsoleLogger({ level: "info", write: (line) => void lines.push(JSON.parse(line)) }),
      keyring: { keys: [{ id: "k1", key: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" }] },
    });
    try {
      const task = await a.runplane.runTasks.tasks.create("acme", { name: "scanner", url: "https://scanner.example/hook" });
      await a.runplane.runTasks.workspaceTasks.create("ws-a", task.id, { "enforcement-level": "mandatory", stages: ["post_plan"] });
      const { run } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
      await a.runplane.runTasks.startStage(run.id, "post_plan");
      await b.runTasks.cancelRun(run.id);
      expect(lines.filter((l) => l.event === "stage.status")).toEqual([
        expect.objectContaining({ from: "running", to: "canceled", durationMs: 36 }),
      ]);
    } finally {
      await a.runplane.close();
      await b.close();
      const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      await dropSchema(admin, schema);
      await admin.end();
    }
  });
});
