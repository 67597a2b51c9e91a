import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { callbackBody, runTaskApp, sendCallback, startedRun, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";

// The callback's errors when several things are wrong at once (D17, D17a, D26): an unknown result
// or a wrong token (401, alike), then a final result (409), and only then the body (422): the body
// of a request that fails an earlier check is never looked at.

let dispose = (): void => undefined;
afterEach(() => dispose());

const BAD_BODY = { data: { type: "vars", attributes: { status: "exploded" } } };

describe("callback error order", () => {
  it("answers 401, then 409, then 422, whatever else is wrong", async () => {
    const a: RunTaskApp = await runTaskApp({ name: "memory", create: () => ({ storage: createMemoryStorage(), dispose() {} }) }, (d) => (dispose = d));
    const { resultIds } = await startedRun(a, ["mandatory", "mandatory"]);
    const [open, done] = resultIds as [string, string];
    const openToken = await tokenOf(a, open);
    const doneToken = await tokenOf(a, done);
    expect((await sendCallback(a, done, doneToken, callbackBody("passed"))).status).toBe(200);

    expect((await sendCallback(a, "taskrs-0000000000000000", null, BAD_BODY)).status).toBe(401);
    expect((await sendCallback(a, open, null, BAD_BODY)).status).toBe(401);
    expect((await sendCallback(a, open, doneToken, BAD_BODY)).status).toBe(401);
    expect((await sendCallback(a, done, null, BAD_BODY)).status).toBe(401);
    expect((await sendCallback(a, done, doneToken, BAD_BODY)).status).toBe(409);
    const invalid = await sendCallback(a, open, openToken, BAD_BODY);
    expect(invalid.status).toBe(422);
    expect((await a.storage.taskResults.get(open))?.status).toBe("pending");
  });

  it("answers a forged token the same whether or not the result exists (D17a)", async () => {
    const a: RunTaskApp = await runTaskApp({ name: "memory", create: () => ({ storage: createMemoryStorage(), dispose() {} }) }, (d) => (dispose = d));
    const { resultIds } = await startedRun(a, ["mandatory"]);
    const forged = "f".repeat(43);
    const existing = await sendCallback(a, resultIds[0]!, forged, callbackBody("passed"));
    const unknown = await sendCallback(a, "taskrs-0000000000000000", forged, callbackBody("passed"));
    const noToken = await sendCallback(a, "taskrs-0000000000000000", null, callbackBody("passed"));
    for (const res of [existing, unknown, noToken]) {
      expect(res.status).toBe(401);
      expect(res.text).toBe(existing.text);
      // Every header but the request's own id (a fresh UUID each, D53) says nothing of the result.
      const told = (r: typeof res) => [...r.headers].filter(([name]) => name !== "x-request-id");
      expect(told(res)).toEqual(told(existing));
      expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(existing.json.errors).toEqual([{ status: "401", title: "unauthorized" }]);
  });
});
