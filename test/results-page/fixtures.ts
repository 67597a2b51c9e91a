import { createResultsPage, type ResultsPageOptions } from "../../src/index.js";
import { STORAGES } from "../helpers/storages.js";
import { attachTask, callbackBody, createTask, runTaskApp, sendCallback, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";

/** A run whose post-plan stage holds a mandatory scanner (failed) and an advisory linter (passed). */

export const SCRIPT = "<script>window.__pwned=1</script>";

const outcome = (outcomeId: string, attributes: Record<string, unknown>) => ({
  type: "task-result-outcomes",
  attributes: { "outcome-id": outcomeId, ...attributes },
});

/** Sent in this order; by severity they read crit, med, low, plain, evil. */
export const SCANNER_OUTCOMES = [
  outcome("low", {
    description: "Unused variable",
    tags: { severity: [{ label: "Low", level: "info" }], STATUS: [{ label: "Fixed" }] },
  }),
  outcome("plain", {
    description: `Untagged finding ${SCRIPT}`,
    url: "javascript:window.__pwned=1",
  }),
  outcome("crit", {
    description: "Security group open to the world",
    url: "https://scanner.example/findings/crit",
    body: [
      "## Why it matters",
      "",
      "Port **22** is open to `0.0.0.0/0`. See [the guide](https://docs.example/ssh) or https://docs.example/bare.",
      "",
      "<b>raw html</b> stays text.",
      "",
      "[a trap](javascript:window.__pwned=1) and ![pixel](https://tracker.example/p.png)",
    ].join("\n"),
    tags: {
      Severity: [{ label: "Critical", level: "error" }],
      Status: [{ label: "Open", level: "warning" }],
      Category: [{ label: "network", level: "info" }, { label: "plain-label" }],
    },
  }),
  outcome("med", {
    description: "Bucket without versioning",
    tags: { SEVERITY: [{ label: "Medium", level: "warning" }], status: [{ label: "Open", level: "warning" }] },
  }),
  outcome("evil", {
    description: `Evil <img src=x onerror="window.__pwned=1"> ${SCRIPT}`,
    url: " JaVaScRiPt:window.__pwned=1",
    body: `${SCRIPT}\n\n[click me](javascript:window.__pwned=1)\n\n<a href="javascript:window.__pwned=1">raw link</a>`,
    tags: { [`<i>key</i>`]: [{ label: "<script>alert(1)</script>", level: "error" }] },
  }),
];

export interface SeededRun {
  app: RunTaskApp;
  runId: string;
  dispose(): void;
}

/** A memory-backed app with the run above; `acme` owners read it, `team-devs` has no grant. */
export async function seedRun(): Promise<SeededRun> {
  let dispose = () => {};
  const app = await runTaskApp(STORAGES[0]!, (d) => (dispose = d));
  await attachTask(app, await createTask(app, "scanner"), "mandatory");
  await attachTask(app, await createTask(app, "linter"), "advisory");
  const { run, stages } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "Deploy <b>v2</b>" });
  await app.runplane.runTasks.startStage(run.id, "post_plan");
  const results = await app.runplane.runTasks.listResults(stages[0]!.id);
  const byName = Object.fromEntries(results.map((r) => [r.taskName, r.id]));
  const callback = async (name: string, body: unknown) => {
    const res = await sendCallback(app, byName[name]!, await tokenOf(app, byName[name]!), body);
    if (res.status !== 200) throw new Error(`callback failed: ${res.status} ${res.text}`);
  };
  await callback(
    "linter",
    callbackBody("passed", { message: "Style is fine", url: "https://linter.example/report" }, [
      outcome("lint-1", { description: "Trailing whitespace", tags: { Severity: [{ label: "Low", level: "info" }] } }),
    ]),
  );
  await callback(
    "scanner",
    callbackBody("failed", { message: `2 problems ${SCRIPT}`, url: "javascript:window.__pwned=1" }, SCANNER_OUTCOMES),
  );
  return { app, runId: run.id, dispose };
}

export const resultsPageFor = (app: RunTaskApp, options: ResultsPageOptions = {}) =>
  createResultsPage(app.runplane, { prefix: "/app", ...options });
