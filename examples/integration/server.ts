import {
  createCallbackClient,
  createRunTaskHandler,
  type CallbackFetch,
  type CallbackOutcome,
  type RunTaskRequest,
} from "../../src/integration/index.js";
import { readPlan, type PlannedChange, type PlanRead } from "./plan.js";
import { readRunSummary, type RunSummaryOptions } from "./run-summary.js";

/**
 * The bundled example run task integration, written with `runplane/integration`. Like a real
 * scanner it downloads the plan (`plan_json_api_url`, with the access token; decision D24) and
 * decides from it: every resource the plan deletes is an error-level outcome and fails the check.
 * It reports `running` with one outcome first. A run message containing "fail" (any case) still
 * forces a failure, and a plan it cannot read fails closed.
 */
export interface ExampleIntegrationOptions {
  /** Must equal the run task's HMAC key; leave empty for a task without one. */
  hmacKey: string | null | undefined;
  /** Used for the plan download and the callbacks. Default: the global `fetch`. */
  fetch?: CallbackFetch;
  onError?: (error: unknown, request: RunTaskRequest) => void;
  /**
   * Also read the whole run through the API with an API token (run, plan, apply,
   * policy checks, comments, run events, the plan's log), report it as an outcome and leave it
   * as a comment; a run it cannot read fails the check, naming the read that failed.
   */
  summary?: RunSummaryOptions;
}

/** At most this many deletions are reported one by one (a callback carries at most 250 outcomes). */
const MAX_FINDINGS = 100;

export function createExampleIntegration(options: ExampleIntegrationOptions): {
  handler: (request: Request) => Promise<Response>;
} {
  const doFetch: CallbackFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const callbacks = createCallbackClient({ fetch: doFetch });

  const check = async (request: RunTaskRequest): Promise<void> => {
    const plan = await readPlan(request, doFetch);
    await callbacks.send(request, { status: "running", message: "Reading the plan", outcomes: [inspected(request, plan)] });
    const deletions = plan?.ok ? plan.changes.filter((c) => c.actions.includes("delete")) : [];
    const summary = options.summary ? await readRunSummary(request, doFetch, options.summary) : null;
    const findings = [...(summary?.ok ? [summary.outcome] : []), ...deletions.slice(0, MAX_FINDINGS).map(deleted)];
    if (summary && !summary.ok) {
      await callbacks.send(request, { status: "failed", message: `The run could not be read: ${summary.reason}`.slice(0, 1000) });
    } else if (request.run_message.toLowerCase().includes("fail")) {
      await callbacks.send(request, { status: "failed", message: "The run message asks for a failure", outcomes: [refused(), ...findings] });
    } else if (plan && !plan.ok) {
      await callbacks.send(request, { status: "failed", message: `The plan could not be read: ${plan.reason}` });
    } else if (deletions.length > 0) {
      const message = `The plan deletes ${deletions.length} resource${deletions.length === 1 ? "" : "s"}`;
      await callbacks.send(request, { status: "failed", message, outcomes: findings });
    } else {
      await callbacks.send(request, { status: "passed", message: "Nothing to report", outcomes: findings });
    }
  };

  const handler = createRunTaskHandler({
    hmacKey: options.hmacKey,
    onRequest: check,
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
  return { handler };
}

const planSummary = (plan: PlanRead | null): string => {
  if (plan === null) return "none at this stage";
  if (!plan.ok) return `unreadable (${plan.reason})`;
  return `${plan.changes.length} resource change${plan.changes.length === 1 ? "" : "s"}`;
};

const inspected = (request: RunTaskRequest, plan: PlanRead | null): CallbackOutcome => ({
  outcomeId: "EXAMPLE-001",
  description: "Run inspected",
  body: [
    "## Run inspected",
    "",
    "| Field | Value |",
    "|---|---|",
    `| Workspace | \`${request.workspace_name}\` |`,
    `| Stage | \`${request.stage}\` |`,
    `| Enforcement | \`${request.task_result_enforcement_level}\` |`,
    `| Plan | ${planSummary(plan)} |`,
  ].join("\n"),
  url: request.run_app_url,
  tags: { Severity: [{ label: "Info", level: "info" }], Status: [{ label: "Inspected" }] },
});

const refused = (): CallbackOutcome => ({
  outcomeId: "EXAMPLE-002",
  description: 'The run message contains "fail"',
  body: "## Failure requested\n\nThis example fails every run whose message contains **fail**. Change the message to pass.",
  tags: { Severity: [{ label: "High", level: "error" }], Status: [{ label: "Failed", level: "error" }] },
});

/** One outcome per deleted resource; its id stays within 64 characters. */
const deleted = (change: PlannedChange): CallbackOutcome => ({
  outcomeId: `DELETE-${change.address}`.slice(0, 64),
  description: `The plan deletes ${change.address}`.slice(0, 1000),
  body: `## Resource deleted\n\nThe plan's actions for \`${change.address}\` are \`${change.actions.join(", ")}\`. This example refuses plans that delete resources.`,
  tags: { Severity: [{ label: "High", level: "error" }], Status: [{ label: "Deleted", level: "error" }] },
});
