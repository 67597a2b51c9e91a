import { afterEach, describe, expect, it } from "vitest";
import { STORAGES } from "../helpers/storages.js";
import { callbackBody, deliverDue, outcomeItem, runTaskApp, sendCallback, startedRun, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";
import type { Storage } from "../../src/storage/types.js";
import { StorageUnavailableError } from "../../src/storage/unavailable.js";

const OUTCOMES = (id: string) => `/api/v2/task-results/${id}/outcomes`;

describe.each(STORAGES)("run task callback and outcomes over HTTP ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const app = (options: Parameters<typeof runTaskApp>[2] = {}): Promise<RunTaskApp> =>
    runTaskApp(setup, (d) => (dispose = d), options);

  /** Everything observable about a result: its stored row and its outcomes. */
  const snapshot = async (a: RunTaskApp, id: string) => ({
    result: await a.storage.taskResults.get(id),
    outcomes: await a.storage.taskResultOutcomes.list(id, { sort: "position" }, { offset: 0, limit: 100 }),
  });

  it("accepts running (repeatedly, adding outcomes), then a final status, with 200 and an empty body", async () => {
    const a = await app();
    const { resultIds } = await startedRun(a, ["mandatory"]);
    const id = resultIds[0]!;
    const token = await tokenOf(a, id);
    const first = await sendCallback(a, id, token, callbackBody("running", { message: "scanning" }, [outcomeItem("A")]));
    expect(first.status).toBe(200);
    expect(first.text).toBe("");
    const second = await sendCallback(a, id, token, callbackBody("running", {}, [outcomeItem("B"), outcomeItem("C")]));
    expect(second.status).toBe(200);
    const final = await sendCallback(a, id, token, callbackBody("passed", { message: "all good", url: "https://scan.example/r/1" }));
    expect(final.status).toBe(200);

    const res = (await a.call("GET", `/api/v2/task-results/${id}`)).json.data.attributes;
    expect(res).toMatchObject({ status: "passed", message: "all good", url: "https://scan.example/r/1", "task-result-outcomes-count": 3 });
    expect(Object.keys(res["status-timestamps"]).sort()).toStrictEqual(["passed-at", "running-at"]);
    const list = await a.call("GET", OUTCOMES(id));
    expect(list.json.data.map((o: any) => o.attributes["outcome-id"])).toStrictEqual(["A", "B", "C"]);
  });

  it("accepts a callback that arrives while the result is still pending", async () => {
    const a = await app();
    const { stageId, resultIds } = await startedRun(a, ["mandatory"]);
    expect((await a.runplane.runTasks.getResult(resultIds[0]!))!.status).toBe("pending");
    const res = await sendCallback(a, resultIds[0]!, await tokenOf(a, resultIds[0]!), callbackBody("failed"));
    expect(res.status).toBe(200);
    expect((await a.runplane.runTasks.getStageById(stageId))!.status).toBe("failed");
  });

  it("accepts the legacy top-level relationships and plain application/json", async () => {
    const a = await app();
    const { resultIds } = await startedRun(a, ["advisory"]);
    const id = resultIds[0]!;
    const body = { ...callbackBody("passed"), relationships: { outcomes: { data: [{ attributes: { "outcome-id": "L", description: "legacy" } }] } } };
    const res = await a.call("PATCH", `/api/v2/task-results/${id}/callback`, { token: await tokenOf(a, id), body, contentType: "application/json" });
    expect(res.status).toBe(200);
    expect((await a.call("GET", OUTCOMES(id))).json.data[0].attributes["outcome-id"]).toBe("L");
  });

  it("rejects bad callbacks with the decided codes and changes nothing", async () => {
    const a = await app();
    const { resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    const [id, otherId] = resultIds as [string, string];
    const token = await tokenOf(a, id);
    const otherToken = await tokenOf(a, otherId);
    const before = await snapshot(a, id);
    const many = Array.from({ length: 251 }, (_, i) => outcomeItem(`O${i}`));

    const cases: [string, string | null, unknown, number, string?][] = [
      ["no token", null, callbackBody("passed"), 401],
      ["a wrong token", "x".repeat(43), callbackBody("passed"), 401],
      ["another result's token", otherToken, callbackBody("passed"), 401],
      ["a bad status", token, callbackBody("errored"), 422, "/data/attributes/status"],
      ["a missing status", token, { data: { type: "task-results", attributes: {} } }, 422, "/data/attributes/status"],
      ["the wrong data.type", token, { data: { type: "tasks", attributes: { status: "passed" } } }, 422, "/data/type"],
      ["251 outcomes", token, callbackBody("passed", {}, many), 422, "/data/relationships/outcomes/data"],
      [
        "an outcome without description",
        token,
        callbackBody("passed", {}, [{ type: "task-result-outcomes", attributes: { "outcome-id": "X" } }]),
        422,
        "/data/relationships/outcomes/data/0/attributes/description",
      ],
      [
        "a tag level outside none|info|warning|error",
        token,
        callbackBody("passed", {}, [outcomeItem("T", { tags: { Severity: [{ label: "High", level: "critical" }] } })]),
        422,
        "/data/relationships/outcomes/data/0/attributes/tags/Severity/0/level",
      ],
      ["a message over 1000 characters", token, callbackBody("passed", { message: "m".repeat(1001) }), 422, "/data/attributes/message"],
    ];
    for (const [name, bearer, body, status, pointer] of cases) {
      const res = await sendCallback(a, id, bearer, body);
      expect(res.status, name).toBe(status);
      expect(res.json.errors[0].status, name).toBe(String(status));
      if (pointer) expect(res.json.errors.map((e: any) => e.source?.pointer), name).toContain(pointer);
      expect(await snapshot(a, id), name).toStrictEqual(before);
    }
    // decision D17a: an unknown result is 401 like a wrong token.
    expect((await sendCallback(a, "taskrs-doesnotexist0000", token, callbackBody("passed"))).status).toBe(401);
  });

  it("rejects an expired token with 401 (fake clock) and changes nothing", async () => {
    const a = await app();
    const { resultIds } = await startedRun(a, ["mandatory"]);
    await deliverDue(a); // decision D16: the deadline runs from the first delivery attempt
    const id = resultIds[0]!;
    const token = await tokenOf(a, id);
    const before = await snapshot(a, id);
    a.clock.advance(10 * 60 * 1000);
    const res = await sendCallback(a, id, token, callbackBody("passed"));
    expect(res.status).toBe(401);
    expect(await snapshot(a, id)).toStrictEqual(before);
  });

  it("restarts the idle window on running callbacks but never past the max (D16 option)", async () => {
    const a = await app({ deadline: { idle: "10m", max: "15m" } });
    const { resultIds } = await startedRun(a, ["mandatory"]);
    await deliverDue(a);
    const id = resultIds[0]!;
    const token = await tokenOf(a, id);
    a.clock.advance(8 * 60 * 1000);
    expect((await sendCallback(a, id, token, callbackBody("running"))).status).toBe(200);
    a.clock.advance(6 * 60 * 1000); // 14 minutes in: alive only because the running callback restarted the window
    expect((await sendCallback(a, id, token, callbackBody("running"))).status).toBe(200);
    a.clock.advance(2 * 60 * 1000); // 16 minutes in: past the 15-minute cap
    expect((await sendCallback(a, id, token, callbackBody("passed"))).status).toBe(401);
  });

  it("answers 409 to a callback for a result that is already final", async () => {
    const a = await app();
    const { resultIds } = await startedRun(a, ["mandatory"]);
    const id = resultIds[0]!;
    const token = await tokenOf(a, id);
    expect((await sendCallback(a, id, token, callbackBody("passed"))).status).toBe(200);
    const before = await snapshot(a, id);
    const late = await sendCallback(a, id, token, callbackBody("failed", {}, [outcomeItem("late")]));
    expect(late.status).toBe(409);
    expect(late.json.errors[0].title).toBe("conflict");
    expect(await snapshot(a, id)).toStrictEqual(before);
  });

  it("answers 200 to the stored final callback sent again (its 503 came after the commit), and 409 to any other", async () => {
    const a = await app();
    const { resultIds } = await startedRun(a, ["mandatory"]);
    const id = resultIds[0]!;
    const token = await tokenOf(a, id);
    expect((await sendCallback(a, id, token, callbackBody("running", {}, [outcomeItem("early")]))).status).toBe(200);
    const final = callbackBody("failed", { message: "2 findings" }, [outcomeItem("f1"), outcomeItem("f2")]);
    expect((await sendCallback(a, id, token, final)).status).toBe(200);
    const before = await snapshot(a, id);
    const again = await sendCallback(a, id, token, final);
    expect(again.status, again.text).toBe(200);
    expect(await snapshot(a, id)).toStrictEqual(before);
    const others = [
      callbackBody("passed", { message: "2 findings" }, [outcomeItem("f1"), outcomeItem("f2")]),
      callbackBody("failed", { message: "3 findings" }, [outcomeItem("f1"), outcomeItem("f2")]),
      callbackBody("failed", { message: "2 findings" }, [outcomeItem("f1")]),
      callbackBody("failed", { message: "2 findings" }, [outcomeItem("early"), outcomeItem("f1"), outcomeItem("f2")]),
      callbackBody("failed", { message: "2 findings" }, [outcomeItem("f2"), outcomeItem("f1")]),
    ];
    for (const other of others) expect((await sendCallback(a, id, token, other)).status).toBe(409);
    expect(await snapshot(a, id)).toStrictEqual(before);
  });

  it("lets exactly one of racing final callbacks win; running callbacks racing keep every outcome", async () => {
    const a = await app();
    const { stageId, resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    const [id, other] = resultIds as [string, string];
    const token = await tokenOf(a, id);
    const statuses = Array.from({ length: 10 }, (_, i) => (i % 2 ? "passed" : "failed"));
    const answers = await Promise.all(statuses.map((s, i) => sendCallback(a, id, token, callbackBody(s, { message: `m${i}` }, [outcomeItem(`F${i}`)]))));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409)).toHaveLength(9);
    const winner = answers.findIndex((r) => r.status === 200);
    const stored = await a.runplane.runTasks.getResult(id);
    expect(stored).toMatchObject({ status: statuses[winner], message: `m${winner}`, outcomesCount: 1 });

    const otherToken = await tokenOf(a, other);
    const running = await Promise.all(
      Array.from({ length: 6 }, (_, i) => sendCallback(a, other, otherToken, callbackBody("running", {}, [outcomeItem(`R${i}`), outcomeItem(`S${i}`)]))),
    );
    expect(running.every((r) => r.status === 200)).toBe(true);
    const list = (await a.call("GET", `${OUTCOMES(other)}?page[size]=100`)).json;
    expect(list.meta.pagination["total-count"]).toBe(12);
    expect(new Set(list.data.map((o: any) => o.attributes["outcome-id"])).size).toBe(12);
    expect((await a.runplane.runTasks.getResult(other))!.outcomesCount).toBe(12);
    expect((await a.runplane.runTasks.getStageById(stageId))!.status).toBe("running");
  });

  it("lists outcomes paginated, filtered by the enriched severity/status label case-insensitively and sorted by severity", async () => {
    const a = await app();
    const { resultIds } = await startedRun(a, ["advisory"]);
    const id = resultIds[0]!;
    const outcomes = [
      outcomeItem("low", { tags: { severity: [{ label: "Low", level: "info" }], Status: [{ label: "Passed", level: "none" }] } }),
      outcomeItem("none"),
      outcomeItem("high", {
        body: "## Why\nbecause",
        tags: { Severity: [{ label: "High", level: "error" }, { label: "Recoverable", level: "info" }], STATUS: [{ label: "Denied", level: "error" }] },
      }),
      outcomeItem("mid", { tags: { Severity: [{ label: "Medium", level: "warning" }] }, url: "https://scan.example/mid" }),
    ];
    expect((await sendCallback(a, id, await tokenOf(a, id), callbackBody("passed", {}, outcomes))).status).toBe(200);

    const ids = async (query: string) => (await a.call("GET", `${OUTCOMES(id)}${query}`)).json.data.map((o: any) => o.attributes["outcome-id"]);
    expect(await ids("")).toStrictEqual(["low", "none", "high", "mid"]);
    expect(await ids("?sort=severity")).toStrictEqual(["high", "mid", "low", "none"]);
    expect(await ids("?filter[severity]=HIGH")).toStrictEqual(["high"]);
    expect(await ids("?filter[severity]=recoverable")).toStrictEqual([]);
    expect(await ids("?filter[status]=passed")).toStrictEqual(["low"]);
    expect(await ids("?filter[status]=denied&filter[severity]=high")).toStrictEqual(["high"]);
    const page = await a.call("GET", `${OUTCOMES(id)}?page[size]=3&page[number]=2`);
    expect(page.json.data.map((o: any) => o.attributes["outcome-id"])).toStrictEqual(["mid"]);
    expect(page.json.meta.pagination).toMatchObject({ "current-page": 2, "total-count": 4, "total-pages": 2 });
    expect((await a.call("GET", `${OUTCOMES(id)}?sort=created`)).status).toBe(400);
    expect((await a.call("GET", `${OUTCOMES(id)}?page[size]=101`)).status).toBe(422);

    const high = (await a.call("GET", `${OUTCOMES(id)}?filter[severity]=high`)).json.data[0];
    const shown = await a.call("GET", `/api/v2/task-result-outcomes/${high.id}`);
    expect(shown.status).toBe(200);
    expect(shown.json.data.type).toBe("task-result-outcomes");
    expect(high.id).toMatch(/^tro-[0-9A-Za-z]{16}$/);
    expect(shown.json.data.attributes).toMatchObject({ "outcome-id": "high", description: "finding high", url: null });
    expect(shown.json.data.attributes.body).toBeUndefined();
    expect(shown.json.data.attributes.tags).toStrictEqual([
      { label: "Severity", value: [{ label: "High", level: "error" }, { label: "Recoverable", level: "info" }] },
      { label: "STATUS", value: [{ label: "Denied", level: "error" }] },
    ]);
    expect(shown.json.data.relationships["task-result"].data).toStrictEqual({ type: "task-results", id });
    expect(shown.json.data.links.body).toBe(`/api/v2/task-result-outcomes/${high.id}/body`);
    const body = await a.call("GET", `/api/v2/task-result-outcomes/${high.id}/body`);
    expect(body.status).toBe(200);
    expect(body.headers.get("content-type")).toMatch(/^text\/markdown/);
    expect(body.text).toBe("## Why\nbecause");

    const plain = (await a.call("GET", `${OUTCOMES(id)}?filter[status]=passed`)).json.data[0];
    expect(plain.links.body).toBeUndefined();
    expect(plain.attributes.tags[0]).toStrictEqual({ label: "severity", value: [{ label: "Low", level: "info" }] });
    expect((await a.call("GET", `/api/v2/task-result-outcomes/${plain.id}/body`)).status).toBe(404);
    expect((await a.call("GET", `/api/v2/task-result-outcomes/${plain.id}`, { token: a.otherOrgToken })).status).toBe(404);
    expect((await a.call("GET", "/api/v2/task-result-outcomes/tro-nope")).status).toBe(404);
  });

  it("refuses a callback body over 5 MiB with 413 and accepts one just under 1 MiB of outcome body", async () => {
    const a = await app();
    const { resultIds } = await startedRun(a, ["advisory"]);
    const id = resultIds[0]!;
    const token = await tokenOf(a, id);
    const huge = await a.call("PATCH", `/api/v2/task-results/${id}/callback`, {
      token,
      raw: JSON.stringify(callbackBody("passed", { message: "x".repeat(5 * 1024 * 1024) })),
    });
    expect(huge.status).toBe(413);
    const big = await sendCallback(a, id, token, callbackBody("passed", {}, [outcomeItem("big", { body: "b".repeat(1024 * 1024 - 10) })]));
    expect(big.status).toBe(200);
  });
});

describe("the callback checks its token before it reads the body (D26)", () => {
  let dispose = () => {};
  afterEach(() => dispose());

  /** A body stream that records whether anything pulled it, and fails like an aborted upload when pulled. */
  const watchedBody = () => {
    const watch = { pulled: false };
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          watch.pulled = true;
          controller.error(new Error("aborted"));
        },
      },
      { highWaterMark: 0 },
    );
    return { watch, stream };
  };
  const patch = (a: RunTaskApp, id: string, token: string | null, stream: ReadableStream<Uint8Array>) =>
    a.runplane.handler(
      new Request(`http://localhost/api/v2/task-results/${id}/callback`, {
        method: "PATCH",
        headers: { "content-type": "application/vnd.api+json", ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
        body: stream,
        duplex: "half",
      } as RequestInit),
    );

  it("answers a missing, wrong, foreign or expired token (and an unknown id) without pulling the body", async () => {
    const a = await runTaskApp(STORAGES[0]!, (d) => (dispose = d));
    const { resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    const [id, otherId] = resultIds as [string, string];
    const cases: [string, string, string | null, number][] = [
      ["no token", id, null, 401],
      ["a wrong token", id, "x".repeat(43), 401],
      ["another result's token", id, await tokenOf(a, otherId), 401],
      ["an unknown result", "taskrs-doesnotexist0000", await tokenOf(a, id), 401],
    ];
    for (const [name, target, token, status] of cases) {
      const { watch, stream } = watchedBody();
      const res = await patch(a, target, token, stream);
      expect(res.status, name).toBe(status);
      expect(watch.pulled, name).toBe(false);
    }
    await deliverDue(a);
    a.clock.advance(10 * 60 * 1000);
    const { watch, stream } = watchedBody();
    expect((await patch(a, id, await tokenOf(a, id), stream)).status).toBe(401);
    expect(watch.pulled).toBe(false);
  });

  it("refuses with 401 a body that arrives after the deadline passed, storing nothing", async () => {
    const a = await runTaskApp(STORAGES[0]!, (d) => (dispose = d));
    const { resultIds } = await startedRun(a, ["mandatory"]);
    await deliverDue(a);
    const id = resultIds[0]!;
    const before = await a.storage.taskResults.get(id);
    const slowBody = async () => {
      a.clock.advance(10 * 60 * 1000); // the upload took past the deadline
      return callbackBody("passed", {}, [outcomeItem("late")]);
    };
    await expect(a.runplane.runTasks.receiveCallback(id, await tokenOf(a, id), slowBody)).rejects.toMatchObject({ status: 401 });
    expect(await a.storage.taskResults.get(id)).toStrictEqual(before);
  });

  it("reads the body for a valid token; an aborted upload is a 400 and a debug line, not an error", async () => {
    const logs: { level: string; message: string }[] = [];
    const record = (level: string) => (message: string) => void logs.push({ level, message });
    const logger = { debug: record("debug"), info: record("info"), warn: record("warn"), error: record("error") };
    const a = await runTaskApp(STORAGES[0]!, (d) => (dispose = d), { logger });
    const { resultIds } = await startedRun(a, ["mandatory"]);
    const id = resultIds[0]!;
    const before = await a.storage.taskResults.get(id);
    const { watch, stream } = watchedBody();
    const res = await patch(a, id, await tokenOf(a, id), stream);
    expect(watch.pulled).toBe(true);
    expect(res.status).toBe(400);
    expect(logs.filter((l) => l.level === "error" || l.level === "warn")).toStrictEqual([]);
    expect(logs.some((l) => l.level === "debug" && /aborted/.test(l.message))).toBe(true);
    expect(await a.storage.taskResults.get(id)).toStrictEqual(before);
  });
});

describe.each(STORAGES)("outcome limits per result (D26, $name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const MiB = 1024 * 1024;
  const POINTER = "/data/relationships/outcomes/data";
  const snapshot = async (a: RunTaskApp, id: string) => ({
    result: await a.storage.taskResults.get(id),
    total: (await a.storage.taskResultOutcomes.list(id, { sort: "position" }, { offset: 0, limit: 1 })).total,
  });
  const batch = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => outcomeItem(`${prefix}${i}`));
  const withBody = (id: string, bytes: number) => outcomeItem(id, { body: "b".repeat(bytes) });

  it("accepts 1,000 outcomes over several callbacks and refuses one more with 422, storing nothing", async () => {
    const a = await runTaskApp(setup, (d) => (dispose = d));
    const { resultIds } = await startedRun(a, ["mandatory"]);
    const id = resultIds[0]!;
    const token = await tokenOf(a, id);
    for (const prefix of ["a", "b", "c", "d"]) {
      expect((await sendCallback(a, id, token, callbackBody("running", {}, batch(prefix, 250)))).status).toBe(200);
    }
    expect((await a.storage.taskResults.get(id))!.outcomesCount).toBe(1000);
    const before = await snapshot(a, id);
    for (const status of ["running", "failed"]) {
      const over = await sendCallback(a, id, token, callbackBody(status, { message: "more" }, [outcomeItem("one-more")]));
      expect(over.status, status).toBe(422);
      expect(over.json.errors[0].detail, status).toMatch(/1,?000 outcomes/);
      expect(over.json.errors[0].source, status).toStrictEqual({ pointer: POINTER });
      expect(await snapshot(a, id), status).toStrictEqual(before);
    }
    // Without outcomes the result can still finish.
    expect((await sendCallback(a, id, token, callbackBody("passed"))).status).toBe(200);
    expect((await a.storage.taskResults.get(id))!).toMatchObject({ status: "passed", outcomesCount: 1000 });
  });

  it("accepts 10 MiB of outcome bodies over several callbacks and refuses one byte more, storing nothing", async () => {
    const a = await runTaskApp(setup, (d) => (dispose = d));
    const { resultIds } = await startedRun(a, ["mandatory"]);
    const id = resultIds[0]!;
    const token = await tokenOf(a, id);
    for (let i = 0; i < 10; i++) {
      expect((await sendCallback(a, id, token, callbackBody("running", {}, [withBody(`big${i}`, MiB)]))).status).toBe(200);
    }
    const before = await snapshot(a, id);
    const over = await sendCallback(a, id, token, callbackBody("running", {}, [outcomeItem("plain"), withBody("tiny", 1)]));
    expect(over.status).toBe(422);
    expect(over.json.errors[0].detail).toMatch(/10 MiB/);
    expect(over.json.errors[0].source).toStrictEqual({ pointer: POINTER });
    expect(await snapshot(a, id)).toStrictEqual(before);
    // Outcomes without a body still fit.
    expect((await sendCallback(a, id, token, callbackBody("running", {}, [outcomeItem("no-body")]))).status).toBe(200);
    expect((await a.storage.taskResults.get(id))!.outcomesCount).toBe(11);
  });

  it("counts UTF-8 bytes of bodies, not characters", async () => {
    const a = await runTaskApp(setup, (d) => (dispose = d));
    const { resultIds } = await startedRun(a, ["mandatory"]);
    const id = resultIds[0]!;
    const token = await tokenOf(a, id);
    // 9 MiB and 600,000 bytes leave 448,576 bytes: 200,000 three-byte characters are 600,000 bytes.
    for (let i = 0; i < 9; i++) expect((await sendCallback(a, id, token, callbackBody("running", {}, [withBody(`big${i}`, MiB)]))).status).toBe(200);
    expect((await sendCallback(a, id, token, callbackBody("running", {}, [withBody("rest", 600_000)]))).status).toBe(200);
    const wide = outcomeItem("wide", { body: "€".repeat(200_000) });
    expect((await sendCallback(a, id, token, callbackBody("running", {}, [wide]))).status).toBe(422);
    expect((await sendCallback(a, id, token, callbackBody("running", {}, [withBody("fits", 448_576)]))).status).toBe(200);
  });

  it("lets only one of two racing running callbacks cross near the limits", async () => {
    const a = await runTaskApp(setup, (d) => (dispose = d));
    const { resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    const [id, other] = resultIds as [string, string];
    const token = await tokenOf(a, id);
    for (const [prefix, n] of [["a", 250], ["b", 250], ["c", 250], ["d", 150]] as const) {
      expect((await sendCallback(a, id, token, callbackBody("running", {}, batch(prefix, n)))).status).toBe(200);
    }
    const pair = await Promise.all(["x", "y"].map((p) => sendCallback(a, id, token, callbackBody("running", {}, batch(p, 60)))));
    expect(pair.map((r) => r.status).sort()).toStrictEqual([200, 422]);
    expect((await a.storage.taskResults.get(id))!.outcomesCount).toBe(960);
    expect((await snapshot(a, id)).total).toBe(960);

    const otherToken = await tokenOf(a, other);
    for (let i = 0; i < 9; i++) {
      expect((await sendCallback(a, other, otherToken, callbackBody("running", {}, [withBody(`big${i}`, MiB)]))).status).toBe(200);
    }
    const bodies = await Promise.all(["x", "y"].map((p) => sendCallback(a, other, otherToken, callbackBody("running", {}, [withBody(p, 600 * 1024)]))));
    expect(bodies.map((r) => r.status).sort()).toStrictEqual([200, 422]);
    expect((await a.storage.taskResults.get(other))!.outcomesCount).toBe(10);
  });
});

/**
 * A storage in which someone else deletes a result between a callback's read and its write: after
 * `deleteBeforeWrite(id)`, the next compare-and-set of that result finds the row gone (nothing is
 * written) and every later read finds nothing, as a row deleted in between would.
 */
function deletingStorage(inner: Storage) {
  const deleted = new Set<string>();
  let doomed: string | null = null;
  const results = inner.taskResults;
  const taskResults: Storage["taskResults"] = {
    get: async (id) => (deleted.has(id) ? null : results.get(id)),
    listByStage: async (stageId) => (await results.listByStage(stageId)).filter((r) => !deleted.has(r.id)),
    findByTokenDigest: async (digest) => {
      const row = await results.findByTokenDigest(digest);
      return row && !deleted.has(row.id) ? row : null;
    },
    transition: async (id, expected, next, outcomes) => {
      if (id === doomed) (doomed = null), deleted.add(id);
      return deleted.has(id) ? null : results.transition(id, expected, next, outcomes);
    },
    listPastDeadline: async (now, limit) => (await results.listPastDeadline(now, limit)).filter((r) => !deleted.has(r.id)),
  };
  return {
    storage: { ...inner, taskResults } as Storage,
    deleteBeforeWrite: (id: string) => void (doomed = id),
    wasDeleted: (id: string) => deleted.has(id),
  };
}

describe.each(STORAGES)("a result deleted while its callback is under way (D17a, $name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());

  it("answers 401 with the document an unknown result gets, never 404, and stores nothing", async () => {
    let race!: ReturnType<typeof deletingStorage>;
    const deleting = {
      name: setup.name,
      create: () => {
        const made = setup.create();
        race = deletingStorage(made.storage);
        return { storage: race.storage, dispose: made.dispose };
      },
    };
    const a = await runTaskApp(deleting, (d) => (dispose = d));
    const { resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    const [id, other] = resultIds as [string, string];
    const token = await tokenOf(a, id);

    const unknown = await sendCallback(a, "taskrs-doesnotexist0000", token, callbackBody("passed", {}, [outcomeItem("A")]));
    expect(unknown.status).toBe(401);

    // The callback reads the result (token valid, not final, no deadline yet); the write finds it
    // gone. The service (a host's own code calls it too) refuses that as unauthorized...
    race.deleteBeforeWrite(other);
    await expect(a.runplane.runTasks.callback(other, await tokenOf(a, other), callbackBody("running"))).rejects.toMatchObject({ code: "unauthorized", status: 401 });
    expect(race.wasDeleted(other)).toBe(true);

    // ...and over HTTP the answer is the one an unknown result gets.
    race.deleteBeforeWrite(id);
    const raced = await sendCallback(a, id, token, callbackBody("passed", {}, [outcomeItem("A")]));
    expect(race.wasDeleted(id)).toBe(true);
    expect(raced.status, raced.text).toBe(401);
    expect(raced.text).toBe(unknown.text);
    expect(raced.headers.get("content-type")).toBe(unknown.headers.get("content-type"));
    expect((await a.storage.taskResultOutcomes.list(id, { sort: "position" }, { offset: 0, limit: 10 })).total).toBe(0);

    // Its token stands for nothing any more: the next callback is refused the same way.
    expect((await sendCallback(a, id, token, callbackBody("running"))).status).toBe(401);
  });
});

describe.each(STORAGES)("a final callback whose commit lost its answer (D28, $name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());

  it("is answered 503, and the integration's retry of it 200, with the result and its outcomes stored once", async () => {
    // The write commits, then the connection is cut before its answer: the adapter can only say unavailable.
    let cutAfterCommit = false;
    const cutting = {
      name: setup.name,
      create: () => {
        const made = setup.create();
        const results = made.storage.taskResults;
        const taskResults: Storage["taskResults"] = {
          ...results,
          transition: async (id, expected, next, outcomes) => {
            const stored = await results.transition(id, expected, next, outcomes);
            if (cutAfterCommit && stored) {
              cutAfterCommit = false;
              throw new StorageUnavailableError("connection reset", "ECONNRESET");
            }
            return stored;
          },
        };
        return { storage: { ...made.storage, taskResults } as Storage, dispose: made.dispose };
      },
    };
    const a = await runTaskApp(cutting, (d) => (dispose = d));
    const { resultIds } = await startedRun(a, ["mandatory"]);
    const id = resultIds[0]!;
    const token = await tokenOf(a, id);
    const final = callbackBody("passed", { message: "clean" }, [outcomeItem("o1"), outcomeItem("o2")]);
    cutAfterCommit = true;
    const first = await sendCallback(a, id, token, final);
    expect(first.status).toBe(503);
    expect(first.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
    const retry = await sendCallback(a, id, token, final);
    expect(retry.status, retry.text).toBe(200);
    expect(await a.storage.taskResults.get(id)).toMatchObject({ status: "passed", message: "clean", outcomesCount: 2 });
    expect((await a.storage.taskResultOutcomes.list(id, { sort: "position" }, { offset: 0, limit: 10 })).total).toBe(2);
    // The retry settles the stage the cut-off first try could not: no wait for the deadline sweep.
    const result = await a.storage.taskResults.get(id);
    expect((await a.storage.taskStages.get(result!.stageId))?.status).toBe("passed");
  });
});
