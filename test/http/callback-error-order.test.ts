import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { callbackBody, runTaskApp, sendCallback, startedRun, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";

// The callback's errors when several things are wrong at once (D17, D26): an unknown result is 404,
// then the token (401), then a final result (409), and only then the body (422): the body of a
// request that fails an earlier check is never looked at.

let dispose = (): void => undefined;
afterEach(() => dispose());

const BAD_BODY = { data: { type: "vars", attributes: { status: "exploded" } } };

describe("callback error order", () => {
  it("answers 404, then 401, then 409, then 422, whatever else is wrong", async () => {
    const a: RunTaskApp = await runTaskApp({ name: "memory", create: () => ({ storage: createMemoryStorage(), dispose() {} }) }, (d) => (dispose = d));
    const { resultIds } = await startedRun(a, ["mandatory", "mandatory"]);
    const [open, done] = resultIds as [string, string];
    const openToken = await tokenOf(a, open);
    const doneToken = await tokenOf(a, done);
    expect((await sendCallback(a, done, doneToken, callbackBody("passed"))).status).toBe(200);

    expect((await sendCallback(a, "taskrs-0000000000000000", null, BAD_BODY)).status).toBe(404);
    expect((await sendCallback(a, open, null, BAD_BODY)).status).toBe(401);
    expect((await sendCallback(a, open, doneToken, BAD_BODY)).status).toBe(401);
    expect((await sendCallback(a, done, null, BAD_BODY)).status).toBe(401);
    expect((await sendCallback(a, done, doneToken, BAD_BODY)).status).toBe(409);
    const invalid = await sendCallback(a, open, openToken, BAD_BODY);
    expect(invalid.status).toBe(422);
    expect((await a.storage.taskResults.get(open))?.status).toBe("pending");
  });
});
