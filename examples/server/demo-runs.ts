import { isFinalStageStatus } from "../../src/domain/stage-machine.js";
import type { Runplane, StageStatusEvent, TaskStageView } from "../../src/index.js";
import { DEMO } from "./demo.js";

/**
 * `POST /demo/runs`, an example-only route outside the API: it plays the host's part of a run the
 * way a real host would. It creates a run on the demo workspace, starts each task stage in run
 * order, waits for it through the events API (`runTasks.on("stage-status")`) until it is final, and
 * stops at the first stage that did not pass. Owners token only. Body (optional):
 * `{"message": "..."}`; a message containing "fail" makes the example integration fail the
 * mandatory check.
 */
export interface DemoRunsOptions {
  /** Origin of the results page, e.g. `http://127.0.0.1:8080`. */
  publicUrl: string;
  /** Prefix the results page is mounted at. Default `/app`. */
  resultsPrefix?: string;
  /** How long one request may wait for all stages. Default 60 s. */
  timeoutMs?: number;
}

const MAX_BODY_CHARS = 16 * 1024;

const json = (status: number, body: unknown): Response =>
  new Response(`${JSON.stringify(body, null, 2)}\n`, { status, headers: { "content-type": "application/json" } });
const error = (status: number, detail: string): Response => json(status, { error: detail });

export function createDemoRuns(runplane: Runplane, options: DemoRunsOptions) {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const prefix = options.resultsPrefix ?? "/app";
  const closing = new AbortController();

  /** Resolves the stage once it is final (or awaiting an override), or null when time runs out. */
  async function settle(stage: TaskStageView, deadline: number): Promise<TaskStageView | null> {
    let wake: () => void = () => undefined;
    const unsubscribe = runplane.runTasks.on("stage-status", (event: StageStatusEvent) => {
      if (event.stageId === stage.id) wake();
    });
    try {
      for (;;) {
        // Subscribed before reading, so a change between the read and the wait is never missed.
        const changed = new Promise<void>((resolve) => (wake = resolve));
        const current = await runplane.runTasks.getStage(stage.runId, stage.stage);
        if (!current) return null;
        if (isFinalStageStatus(current.status) || current.status === "awaiting_override") return current;
        const left = deadline - Date.now();
        if (left <= 0 || closing.signal.aborted) return null;
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          changed,
          new Promise<void>((resolve) => (timer = setTimeout(resolve, left))),
          new Promise<void>((resolve) => closing.signal.addEventListener("abort", () => resolve(), { once: true })),
        ]);
        clearTimeout(timer);
      }
    } finally {
      unsubscribe();
    }
  }

  async function readMessage(request: Request): Promise<string | Response> {
    const text = await request.text();
    if (text.length > MAX_BODY_CHARS) return error(413, "body too large");
    if (text.trim() === "") return "Triggered via the demo route";
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return error(400, 'body must be JSON: {"message": "..."}');
    }
    const message = (body as { message?: unknown } | null)?.message;
    if (message === undefined) return "Triggered via the demo route";
    if (typeof message !== "string") return error(422, "message must be a string");
    return message;
  }

  async function handle(request: Request): Promise<Response> {
    if (request.method !== "POST") return new Response(null, { status: 405, headers: { allow: "POST" } });
    const principal = await runplane.auth.authenticate(request);
    if (!principal) return error(401, "send the owners token as Authorization: Bearer <token>");
    if (!principal.isOwner || principal.organization !== DEMO.organization) return error(404, "not found");
    const message = await readMessage(request);
    if (message instanceof Response) return message;

    const deadline = Date.now() + timeoutMs;
    const { run, stages } = await runplane.runTasks.createRun({
      workspaceId: DEMO.workspace,
      configurationVersionId: "cv-demo",
      message,
      createdBy: principal.userId ?? "demo",
    });
    const statuses: Record<string, string> = Object.fromEntries(stages.map((s) => [s.stage, s.status]));
    let timedOut = false;
    for (const stage of stages) {
      await runplane.runTasks.startStage(run.id, stage.stage);
      const final = await settle(stage, deadline);
      if (!final) {
        timedOut = true;
        statuses[stage.stage] = (await runplane.runTasks.getStage(run.id, stage.stage))?.status ?? "unknown";
        break;
      }
      statuses[stage.stage] = final.status;
      if (final.status !== "passed") break;
    }
    return json(200, {
      run_id: run.id,
      message,
      stages: statuses,
      ...(timedOut ? { timed_out: true } : {}),
      results_page: `${options.publicUrl}${prefix}/runs/${run.id}`,
    });
  }

  return {
    /** The route as a Web handler. */
    handler: async (request: Request): Promise<Response> => {
      if (closing.signal.aborted) return error(503, "shutting down");
      try {
        return await handle(request);
      } catch (err) {
        process.stderr.write(`demo run failed: ${err instanceof Error ? `${err.name}: ${err.message}` : typeof err}\n`);
        return error(500, "demo run failed");
      }
    },
    /** Ends waiting requests (they answer with the statuses reached so far). */
    close: () => closing.abort(),
  };
}
