import { answerLine, WORDS_IN_REASON } from "../../src/delivery/failure-reason.js";
import { isFinalStageStatus } from "../../src/domain/stage-machine.js";
import type { Runplane, StageStatusEvent, TaskStageView } from "../../src/index.js";
import { DEMO } from "./demo.js";

/**
 * `POST /demo/runs`, an example-only route outside the API: it plays the host's part of a run the
 * way a real host would. It creates a run on the demo workspace, starts each task stage in run
 * order, waits for it through the events API (`runTasks.on("stage-status")`) until it is final, and
 * stops at the first stage that did not pass. Owners token only. Body (optional):
 * `{"message": "..."}`; a message containing "fail" makes the example integration fail the
 * mandatory check. Once a result's request has failed an attempt (its integration is
 * down or refuses it), it answers at once, 202, with the stages so far, `retrying: true` and what
 * the integration last answered, instead of waiting out the retries; the run goes on: the host
 * keeps playing it after answering (D47), so it passes once its integration recovers, and once its
 * story ended (every stage played, or one stopped it) it says so with `runTasks.endRun`. The same
 * early answer, with `waiting_for_agent`, while a result of an agent pool's task waits and no agent
 * of the pool is connected to any host (decision D34): it says so, and since when.
 */
export interface DemoRunsOptions {
  /** Origin of the results page, e.g. `http://127.0.0.1:8080`. */
  publicUrl: string;
  /** Prefix the results page is mounted at. Default `/app`. */
  resultsPrefix?: string;
  /** How long one request may wait for all stages. Default 60 s. */
  timeoutMs?: number;
  /**
   * How long the host goes on playing a run after the request answered (D47). Default 15 minutes:
   * longer than a result's deadline (D16, 10 minutes from its first attempt) and its retries.
   */
  playForMs?: number;
}

const MAX_BODY_CHARS = 16 * 1024;
/** Failed attempts make no stage event, so a waiting request also looks at the attempts this often. */
const ATTEMPT_POLL_MS = 250;

/** What waiting for a stage came to. */
type Settled =
  | { state: "final"; stage: TaskStageView }
  | { state: "retrying"; lastAnswer: string }
  /** decision D34: a pool result waits and no agent of its pool is connected to any host. */
  | { state: "waiting-for-agent"; waiting: string }
  | { state: "timed-out" };

const json = (status: number, body: unknown): Response =>
  new Response(`${JSON.stringify(body, null, 2)}\n`, { status, headers: { "content-type": "application/json" } });
const error = (status: number, detail: string): Response => json(status, { error: detail });

/**
 * What a result of the stage that is still `pending` last heard from its integration, when that
 * attempt failed: `401: <its words>`, or why nothing came back; null while none has failed.
 */
async function failingAnswer(runplane: Runplane, stageId: string): Promise<string | null> {
  for (const result of await runplane.runTasks.listResults(stageId)) {
    if (result.status !== "pending") continue;
    const [last] = (await runplane.runTasks.listDeliveryAttempts(result.id, { offset: 0, limit: 1 })).items;
    // decision D58: an attempt an agent holds has no answer yet; it is not failing.
    if (!last || last.status === 200 || last.outcome === "under-way") continue;
    if (last.status === null) return last.detail;
    const said = answerLine({ text: last.excerpt, truncated: last.excerptTruncated }, WORDS_IN_REASON);
    return `${last.status}${said ? `: ${said}` : ""}`;
  }
  return null;
}

/** Why a pending result of the stage waits for an agent of its pool (none connected), else null. */
async function waitingForAgent(runplane: Runplane, stageId: string): Promise<string | null> {
  for (const result of await runplane.runTasks.listResults(stageId)) {
    if (result.status !== "pending" || !result.agentPoolId) continue;
    const waiting = (await runplane.runTasks.agentFacts(result))?.waiting;
    if (waiting) return waiting;
  }
  return null;
}

/**
 * The server's shutdown as one listener on its signal and a set of wakers: runs played in the
 * background (D47) wait on it together, and one abort listener each would pass Node's limit of 10.
 */
interface Closing {
  readonly aborted: boolean;
  /** Calls `wake` on shutdown; returns the function that forgets it. */
  onClose(wake: () => void): () => void;
}

function closingOf(signal: AbortSignal): Closing {
  const wakers = new Set<() => void>();
  signal.addEventListener("abort", () => wakers.forEach((wake) => wake()), { once: true });
  return {
    get aborted() {
      return signal.aborted;
    },
    onClose(wake) {
      wakers.add(wake);
      return () => wakers.delete(wake);
    },
  };
}

/** Resolves once the stage is final (or awaiting an override), one of its requests is failing, or time runs out. */
async function settle(runplane: Runplane, closing: Closing, stage: TaskStageView, deadline: number, watchAttempts: boolean): Promise<Settled> {
  let wake: () => void = () => undefined;
  const unsubscribe = runplane.runTasks.on("stage-status", (event: StageStatusEvent) => {
    if (event.stageId === stage.id) wake();
  });
  try {
    for (;;) {
      // Subscribed before reading, so a change between the read and the wait is never missed.
      const changed = new Promise<void>((resolve) => (wake = resolve));
      const current = await runplane.runTasks.getStage(stage.runId, stage.stage);
      if (!current) return { state: "timed-out" };
      if (isFinalStageStatus(current.status) || current.status === "awaiting_override") return { state: "final", stage: current };
      const lastAnswer = watchAttempts ? await failingAnswer(runplane, stage.id) : null;
      if (lastAnswer !== null) return { state: "retrying", lastAnswer };
      const waiting = await waitingForAgent(runplane, stage.id);
      if (waiting !== null) return { state: "waiting-for-agent", waiting };
      const left = deadline - Date.now();
      if (left <= 0 || closing.aborted) return { state: "timed-out" };
      let timer: NodeJS.Timeout | undefined;
      let forget: () => void = () => undefined;
      await Promise.race([
        changed,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(left, ATTEMPT_POLL_MS)))),
        new Promise<void>((resolve) => (forget = closing.onClose(resolve))),
      ]);
      clearTimeout(timer);
      // Left behind, the wakers would pile up with every demo run.
      forget();
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

/** How the stages went when the request answers: each stage's status, and why it answered early (null when it did not). */
interface StagesOutcome {
  statuses: Record<string, string>;
  stopped: Exclude<Settled, { state: "final" }> | null;
}

const statusesOf = async (runplane: Runplane, runId: string): Promise<Record<string, string>> =>
  Object.fromEntries((await runplane.runTasks.listStages(runId)).items.map((s) => [s.stage, s.status]));

/**
 * Starts each stage in run order and waits for it, stopping at the first that did not pass.
 * `answer` is called once: when every stage is played, or as soon as a request is failing or
 * `answerBy` passes. decision D47: the run does not stop there. The host goes on playing it in the
 * background (until `giveUpAt` or shutdown), so a run whose integration recovers after the answer
 * passes its stages; once its story ended the host says so (`endRun`), and no stage it never
 * started stays pending.
 */
async function playStages(
  runplane: Runplane,
  closing: Closing,
  runId: string,
  stages: readonly TaskStageView[],
  times: { answerBy: number; giveUpAt: number },
  answer: (outcome: StagesOutcome) => void,
): Promise<void> {
  let answered = false;
  const reply = async (stopped: StagesOutcome["stopped"]) => {
    if (answered) return;
    answered = true;
    answer({ statuses: await statusesOf(runplane, runId), stopped });
  };
  let ended = true;
  for (const stage of stages) {
    await runplane.runTasks.startStage(runId, stage.stage);
    let settled = await settle(runplane, closing, stage, answered ? times.giveUpAt : times.answerBy, !answered);
    if (settled.state !== "final") {
      await reply(settled);
      settled = await settle(runplane, closing, stage, times.giveUpAt, false);
    }
    if (settled.state !== "final" || settled.stage.status === "awaiting_override") {
      // Shutting down, given up, or waiting for a person: the story has not ended.
      ended = false;
      break;
    }
    if (settled.stage.status !== "passed") break;
  }
  if (ended) await runplane.runTasks.endRun(runId);
  await reply(null);
}

/**
 * The route's answer: 202 while a request is retrying (accepted and still going; the results page
 * shows each attempt as it happens), else 200.
 */
function answer(runId: string, message: string, { statuses, stopped }: StagesOutcome, resultsPage: string): Response {
  return json(stopped?.state === "retrying" || stopped?.state === "waiting-for-agent" ? 202 : 200, {
    run_id: runId,
    message,
    stages: statuses,
    ...(stopped?.state === "timed-out" ? { timed_out: true } : {}),
    ...(stopped?.state === "retrying" ? { retrying: true, last_answer: stopped.lastAnswer } : {}),
    ...(stopped?.state === "waiting-for-agent" ? { waiting_for_agent: stopped.waiting } : {}),
    results_page: resultsPage,
  });
}

export function createDemoRuns(runplane: Runplane, options: DemoRunsOptions) {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const playForMs = Math.max(timeoutMs, options.playForMs ?? 15 * 60_000);
  /** Runs still being played after their request answered (D47), ended by `close`. */
  const playing = new Set<Promise<void>>();
  const prefix = options.resultsPrefix ?? "/app";
  const closing = new AbortController();
  const shutdown = closingOf(closing.signal);

  async function handle(request: Request): Promise<Response> {
    if (request.method !== "POST") return new Response(null, { status: 405, headers: { allow: "POST" } });
    const principal = await runplane.auth.authenticate(request);
    if (!principal) return error(401, "send the owners token as Authorization: Bearer <token>");
    if (!principal.isOwner || principal.organization !== DEMO.organization) return error(404, "not found");
    const message = await readMessage(request);
    if (message instanceof Response) return message;

    const now = Date.now();
    const { run, stages } = await runplane.runTasks.createRun({
      workspaceId: DEMO.workspace,
      configurationVersionId: "cv-demo",
      message,
      // The owners token is a team's: its runs are the demo user's, whom seedDemo records in the directory.
      createdBy: principal.userId ?? DEMO.user,
    });
    const outcome = await new Promise<StagesOutcome>((resolve, reject) => {
      const times = { answerBy: now + timeoutMs, giveUpAt: now + playForMs };
      const play = playStages(runplane, shutdown, run.id, stages, times, resolve).catch((err: unknown) => {
        process.stderr.write(`demo run ${run.id} stopped: ${err instanceof Error ? `${err.name}: ${err.message}` : typeof err}\n`);
        reject(err instanceof Error ? err : new Error("demo run failed"));
      });
      playing.add(play);
      void play.finally(() => playing.delete(play));
    });
    return answer(run.id, message, outcome, `${options.publicUrl}${prefix}/runs/${run.id}`);
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
    /** Ends waiting requests (they answer with the statuses reached so far) and the runs played in the background. */
    close: async () => {
      closing.abort();
      await Promise.allSettled([...playing]);
    },
  };
}
