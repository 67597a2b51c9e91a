import { createDispatcher, createKeyring, generateKey, type HttpRequest, type HttpResponse, type HttpTransport } from "../../src/index.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { attachTask, callbackBody, createTask, payloadOf, sendCallback } from "../helpers/run-tasks.js";
import { manualClock, START, type ManualClock } from "../delivery/support.js";
import { SCRIPT } from "./fixtures.js";

/**
 * decision D31 on the results page: an integration (`gatekeeper`, mandatory on `alpha-ws`) that
 * answers every run task request 401 with a body echoing the request's access token and a script.
 * Run `retrying` has made 5 attempts and waits for its 6th; run `unreachable` ended at its deadline
 * (D16); run `clean`, on `beta-ws`, passed with a `linter` that answers 200. No network: the
 * transport answers in memory, and the clock moves only when told.
 */

export const FAILING_URL = "https://gatekeeper.example/hook";
/** Where the clock stands when the pages are read: attempt 5 was at +15 s, attempt 6 is due at +31 s. */
export const SECONDS_AFTER_START = 21;

const text = (body: HttpRequest["body"]): string => (typeof body === "string" ? body : new TextDecoder().decode(body));

/** Answers 200 except run task requests to {@link FAILING_URL}, which get a 401 echoing the token. */
function gatekeeperTransport(): HttpTransport {
  return {
    async send(req): Promise<HttpResponse> {
      const token = (JSON.parse(text(req.body)) as { access_token?: string }).access_token ?? "";
      if (req.url !== FAILING_URL || token === "test-token") return { status: 200, headers: {}, body: "", bodyTruncated: false };
      const body = JSON.stringify({ error: `Unauthorized: token ${token} is not known here ${SCRIPT}` });
      return { status: 401, headers: { "content-type": "application/json" }, body, bodyTruncated: false };
    },
    async close() {},
  };
}

export interface FailingSeed {
  app: TestApp & { clock: ManualClock };
  runs: { retrying: string; unreachable: string; clean: string };
  results: { retrying: string; unreachable: string };
  /** One dispatcher pass: sends what is due and sweeps (D16). */
  tick(): Promise<unknown>;
}

export async function seedFailing(): Promise<FailingSeed> {
  const clock = manualClock();
  const keyring = createKeyring({ keys: [{ id: "k1", key: generateKey() }] });
  const app = Object.assign(await createTestApp({ keyring, clock, publicUrl: "https://runplane.example", transport: gatekeeperTransport() }), { clock, keyring });
  const dispatcher = createDispatcher(app.runplane, { random: () => 0, owner: "test" });
  const tick = () => dispatcher.tick();
  await attachTask(app, await createTask(app, "gatekeeper", { url: FAILING_URL }), "mandatory");
  await attachTask(app, await createTask(app, "linter"), "advisory", ["post_plan"], "ws-b");
  const start = async (workspaceId: string, message: string) => {
    const { run, stages } = await app.runplane.runTasks.createRun({ workspaceId, configurationVersionId: "cv-1", message });
    await app.runplane.runTasks.startStage(run.id, "post_plan");
    return { runId: run.id, resultId: (await app.runplane.runTasks.listResults(stages[0]!.id))[0]!.id };
  };

  // Tried every minute until its deadline (10 minutes after the first attempt), then swept.
  const unreachable = await start("ws-a", "never delivered");
  for (let minute = 0; minute <= 11; minute++, clock.advance(60_000)) await tick();

  const clean = await start("ws-b", "all good");
  await tick();
  const token = (await payloadOf(app.storage, keyring, clean.resultId)).access_token as string;
  const passed = await sendCallback(app, clean.resultId, token, callbackBody("passed"));
  if (passed.status !== 200) throw new Error(`callback failed: ${passed.status}`);

  // Attempts at +0, +1, +3, +7 and +15 s (backoff 1, 2, 4, 8 s without jitter); the 6th waits 16 s.
  clock.set(START + 3_600_000);
  const retrying = await start("ws-a", "being retried");
  for (const wait of [0, 1, 2, 4, 8]) {
    clock.advance(wait * 1000);
    await tick();
  }
  clock.advance((SECONDS_AFTER_START - 15) * 1000);
  return {
    app,
    runs: { retrying: retrying.runId, unreachable: unreachable.runId, clean: clean.runId },
    results: { retrying: retrying.resultId, unreachable: unreachable.resultId },
    tick,
  };
}
