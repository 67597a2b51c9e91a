import { describe, expect, it } from "vitest";
import { verificationRequest } from "../../src/domain/run-task-request.js";
import { createRunTaskHandler, type RunTaskRequest } from "../../src/integration/index.js";
import { HMAC_KEY, requestInput, runTaskRequest, signedPost } from "./fixtures.js";

const urls = requestInput().urls;
const omit = <T extends object>(value: T, key: keyof T) => Object.fromEntries(Object.entries(value).filter(([k]) => k !== key));

describe("createRunTaskHandler", () => {
  const payload = runTaskRequest();

  function handlerWith(hmacKey: string | null = HMAC_KEY) {
    const received: RunTaskRequest[] = [];
    const errors: unknown[] = [];
    let resolveHandled: (request: RunTaskRequest) => void = () => {};
    const handled = new Promise<RunTaskRequest>((resolve) => (resolveHandled = resolve));
    const handler = createRunTaskHandler({
      hmacKey,
      onRequest: (request) => {
        received.push(request);
        resolveHandled(request);
      },
      onError: (error) => errors.push(error),
    });
    return { handler, received, errors, handled };
  }

  it("answers 200 and runs onRequest only after responding", async () => {
    const { handler, received, handled } = handlerWith();
    const response = await handler(signedPost(payload));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
    expect(received).toHaveLength(0);
    expect(await handled).toEqual(payload);
  });

  it("accepts the X-SVC-Task-Signature header of runplane's default dialect", async () => {
    const { handler, handled } = handlerWith();
    expect((await handler(signedPost(payload, { header: "X-SVC-Task-Signature" }))).status).toBe(200);
    await handled;
  });

  it("accepts an unsigned request when it has no key", async () => {
    const { handler, handled } = handlerWith(null);
    expect((await handler(signedPost(payload, { key: null }))).status).toBe(200);
    await handled;
  });

  it("answers 401 to a wrong signature or an unsigned request, and does nothing", async () => {
    const { handler, received, handled } = handlerWith();
    expect((await handler(signedPost(payload, { key: "other-key" }))).status).toBe(401);
    expect((await handler(signedPost(payload, { key: null }))).status).toBe(401);
    const noKey = handlerWith(null);
    expect((await noKey.handler(signedPost(payload))).status).toBe(401);
    // A request each handler accepts afterwards is handed over after anything scheduled before it
    // (onRequest runs in order): once it is, the refused ones have had their chance.
    const accepted = runTaskRequest({ accessToken: "at-accepted-after" });
    expect((await handler(signedPost(accepted))).status).toBe(200);
    expect((await noKey.handler(signedPost(accepted, { key: null }))).status).toBe(200);
    await Promise.all([handled, noKey.handled]);
    expect([...received, ...noKey.received]).toEqual([accepted, accepted]);
  });

  it("answers 400 with JSON:API errors to a signed but invalid payload", async () => {
    const { handler } = handlerWith();
    const bytes = new TextEncoder().encode(JSON.stringify(omit(payload, "access_token")));
    const response = await handler(signedPost(bytes));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [{ status: "400", title: "bad request", detail: expect.any(String), source: { pointer: "/access_token" } }],
    });
    expect((await handler(signedPost(new TextEncoder().encode("not json")))).status).toBe(400);
  });

  it("answers the verification request 200 without calling onRequest, even when its payload is partial", async () => {
    const { handler, received, handled } = handlerWith();
    const verification = verificationRequest({ organizationName: "acme", urls, at: new Date(0) });
    expect((await handler(signedPost(verification))).status).toBe(200);
    const partial = new TextEncoder().encode(JSON.stringify({ payload_version: 1, access_token: "test-token" }));
    expect((await handler(signedPost(partial))).status).toBe(200);
    // The next real request is the first one handed over (onRequest runs in order).
    expect((await handler(signedPost(payload))).status).toBe(200);
    expect(await handled).toEqual(payload);
    expect(received).toEqual([payload]);
  });

  it("answers 405 to other methods and 413 past the body limit", async () => {
    const { handler } = handlerWith();
    expect((await handler(new Request("http://integration.test/", { method: "GET" }))).status).toBe(405);
    const small = createRunTaskHandler({ hmacKey: HMAC_KEY, onRequest: () => {}, maxBodyBytes: 100 });
    expect((await small(signedPost(payload))).status).toBe(413);
  });

  it("passes what onRequest throws to onError", async () => {
    const failure = new Error("scanner down");
    const caught = new Promise<[unknown, RunTaskRequest]>((resolve) => {
      const handler = createRunTaskHandler({
        hmacKey: HMAC_KEY,
        onRequest: async () => {
          throw failure;
        },
        onError: (error, request) => resolve([error, request]),
      });
      void handler(signedPost(payload));
    });
    expect(await caught).toEqual([failure, payload]);
  });
});
