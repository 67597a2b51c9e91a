import { describe, expect, it, vi } from "vitest";
import { serializeRunTaskRequest, signPayload, verificationRequest } from "../../src/domain/run-task-request.js";
import {
  CallbackError,
  CallbackValidationError,
  createCallbackClient,
  isCallbackError,
  parseRunTaskRequest,
  signatureFromHeaders,
  verifyRunTaskSignature,
  type CallbackOutcome,
} from "../../src/integration/index.js";
import { CallbackSchema } from "../../src/schemas/run-tasks.js";
import { HMAC_KEY, recordingFetch, requestInput, runTaskRequest, signedPost } from "./fixtures.js";

const urls = requestInput().urls;
const omit = <T extends object>(value: T, key: keyof T) => Object.fromEntries(Object.entries(value).filter(([k]) => k !== key));

describe("parseRunTaskRequest", () => {
  it("accepts every field of spec 4.1 from bytes, text and an already parsed value", () => {
    const payload = runTaskRequest();
    const bytes = serializeRunTaskRequest(payload);
    for (const body of [bytes, new TextDecoder().decode(bytes), JSON.parse(new TextDecoder().decode(bytes)) as unknown]) {
      expect(parseRunTaskRequest(body)).toEqual({ ok: true, request: payload, isVerification: false });
    }
  });

  it("accepts a pre_plan request, which has no plan URL", () => {
    const result = parseRunTaskRequest(runTaskRequest({ stage: "pre_plan", vcs: null }));
    expect(result.ok && result.request.plan_json_api_url).toBe(undefined);
  });

  it("marks the verification request by its test-token", () => {
    const result = parseRunTaskRequest(verificationRequest({ organizationName: "acme", urls, at: new Date(0) }));
    expect(result).toMatchObject({ ok: true, isVerification: true });
  });

  it("drops keys newer than spec 4.1 instead of refusing them", () => {
    const result = parseRunTaskRequest({ ...runTaskRequest(), project_id: "prj-1", project_name: "core" });
    expect(result).toEqual({ ok: true, request: runTaskRequest(), isVerification: false });
  });

  it("keeps vcs_commit_hash (string or null) and accepts a sender that leaves it out", () => {
    const withHash = parseRunTaskRequest({ ...runTaskRequest(), vcs_commit_hash: "abc123" });
    expect(withHash).toEqual({ ok: true, request: { ...runTaskRequest(), vcs_commit_hash: "abc123" }, isVerification: false });
    const withNull = parseRunTaskRequest({ ...runTaskRequest(), vcs_commit_hash: null });
    expect(withNull).toEqual({ ok: true, request: { ...runTaskRequest(), vcs_commit_hash: null }, isVerification: false });
    expect(parseRunTaskRequest(omit({ ...runTaskRequest(), vcs_commit_hash: "x" }, "vcs_commit_hash")).ok).toBe(true);
  });

  it("refuses a payload with a missing field, pointing at it", () => {
    expect(parseRunTaskRequest(omit(runTaskRequest(), "task_result_callback_url"))).toEqual({
      ok: false,
      issues: [{ pointer: "/task_result_callback_url", message: expect.any(String) }],
    });
  });

  it("refuses wrong types and values", () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ payload_version: 2 }, "/payload_version"],
      [{ capabilities: { outcomes: "yes" } }, "/capabilities/outcomes"],
      [{ is_speculative: "false" }, "/is_speculative"],
      [{ stage: "post-plan" }, "/stage"],
      [{ task_result_enforcement_level: "soft" }, "/task_result_enforcement_level"],
      [{ vcs_branch: 42 }, "/vcs_branch"],
    ];
    for (const [change, pointer] of cases) {
      const result = parseRunTaskRequest({ ...runTaskRequest(), ...change });
      expect(result.ok ? [] : result.issues.map((issue) => issue.pointer)).toEqual([pointer]);
    }
  });

  it("refuses bodies that are not JSON or not UTF-8", () => {
    expect(parseRunTaskRequest("{")).toEqual({ ok: false, issues: [{ pointer: "", message: "body is not valid JSON" }] });
    expect(parseRunTaskRequest(new Uint8Array([0x7b, 0xff, 0x7d]))).toEqual({
      ok: false,
      issues: [{ pointer: "", message: "body is not valid UTF-8" }],
    });
    expect(parseRunTaskRequest(null).ok).toBe(false);
  });
});

describe("run task signature", () => {
  const bytes = serializeRunTaskRequest(runTaskRequest());
  const signature = signPayload(bytes, HMAC_KEY);

  it("verifies the signer's output over the exact bytes, given as bytes or text", () => {
    expect(verifyRunTaskSignature(bytes, signature, HMAC_KEY)).toBe(true);
    expect(verifyRunTaskSignature(new TextDecoder().decode(bytes), signature, HMAC_KEY)).toBe(true);
  });

  it("accepts upper-case hex", () => {
    expect(verifyRunTaskSignature(bytes, signature.toUpperCase(), HMAC_KEY)).toBe(true);
  });

  it("refuses a tampered body, one flipped byte, and a re-serialized body", () => {
    const flipped = Uint8Array.from(bytes);
    flipped[10] = flipped[10]! ^ 0x01;
    expect(verifyRunTaskSignature(flipped, signature, HMAC_KEY)).toBe(false);
    const tampered = serializeRunTaskRequest({ ...runTaskRequest(), run_message: "Triggered via API!" });
    expect(verifyRunTaskSignature(tampered, signature, HMAC_KEY)).toBe(false);
    expect(verifyRunTaskSignature(JSON.stringify(JSON.parse(new TextDecoder().decode(bytes)), null, 2), signature, HMAC_KEY)).toBe(false);
  });

  it("refuses a wrong key, a malformed, empty or absent header when a key is set", () => {
    expect(verifyRunTaskSignature(bytes, signature, "other-key")).toBe(false);
    expect(verifyRunTaskSignature(bytes, signature.slice(2), HMAC_KEY)).toBe(false);
    expect(verifyRunTaskSignature(bytes, `sha512=${signature}`, HMAC_KEY)).toBe(false);
    expect(verifyRunTaskSignature(bytes, "", HMAC_KEY)).toBe(false);
    expect(verifyRunTaskSignature(bytes, null, HMAC_KEY)).toBe(false);
  });

  it("without a key, verifies only an empty or absent header", () => {
    for (const key of [null, undefined, ""]) {
      expect(verifyRunTaskSignature(bytes, "", key)).toBe(true);
      expect(verifyRunTaskSignature(bytes, undefined, key)).toBe(true);
      expect(verifyRunTaskSignature(bytes, signature, key)).toBe(false);
    }
  });

  it("reads either header name of decision D1 from Headers, case-insensitively", () => {
    expect(signatureFromHeaders(new Headers({ "X-TFC-Task-Signature": "aa" }))).toBe("aa");
    expect(signatureFromHeaders(new Headers({ "x-svc-task-signature": "bb" }))).toBe("bb");
    expect(signatureFromHeaders(new Headers({ "X-Tfc-Task-Signature": "" }))).toBe("");
    expect(signatureFromHeaders(new Headers({ "Content-Type": "application/json" }))).toBe(null);
  });

  it("reads either header name from a Node-style record, in any case", () => {
    expect(signatureFromHeaders({ "x-tfc-task-signature": "aa" })).toBe("aa");
    expect(signatureFromHeaders({ "X-SVC-TASK-SIGNATURE": "bb", host: "x" })).toBe("bb");
    expect(signatureFromHeaders({ "x-svc-task-signature": undefined })).toBe(null);
    expect(signatureFromHeaders({ "x-svc-task-signature": ["cc", "dd"] })).toBe("cc, dd");
  });

  it("prefers X-TFC-Task-Signature when both are present", () => {
    expect(signatureFromHeaders({ "X-SVC-Task-Signature": "svc", "X-TFC-Task-Signature": "tfc" })).toBe("tfc");
  });
});

const ISSUE_OUTCOME: CallbackOutcome = {
  outcomeId: "CHK-001",
  description: "Bucket allows public read",
  body: "## Details\n\nMarkdown text",
  url: "https://scanner.example/finding/CHK-001",
  tags: {
    "Cost Centre": [{ label: "platform" }],
    Severity: [
      { label: "High", level: "error" },
      { label: "Recoverable", level: "info" },
    ],
    Status: [{ label: "Denied", level: "error" }],
  },
};

// Written in go-tfe's byte order (hashicorp/jsonapi attributes are a Go map, so keys are sorted).
const GO_TFE_WIRE =
  '{"data":{"type":"task-results","attributes":{"message":"1 passed, 0 skipped, 1 failed","status":"failed","url":"https://scanner.example/report/123"},' +
  '"relationships":{"outcomes":{"data":[{"type":"task-result-outcomes","attributes":{"body":"## Details\\n\\nMarkdown text",' +
  '"description":"Bucket allows public read","outcome-id":"CHK-001","tags":{"Cost Centre":[{"label":"platform"}],' +
  '"Severity":[{"label":"High","level":"error"},{"label":"Recoverable","level":"info"}],"Status":[{"label":"Denied","level":"error"}]},' +
  '"url":"https://scanner.example/finding/CHK-001"}}]}}}}';

describe("callback client", () => {
  const request = runTaskRequest();
  const failed = {
    status: "failed",
    message: "1 passed, 0 skipped, 1 failed",
    url: "https://scanner.example/report/123",
    outcomes: [ISSUE_OUTCOME],
  } as const;

  it("PATCHes go-tfe's exact wire form to the callback URL with the bearer token", async () => {
    const { fetch, calls } = recordingFetch();
    await expect(createCallbackClient({ fetch }).send(request, failed)).resolves.toEqual({ status: 200 });
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call!.method).toBe("PATCH");
    expect(call!.url).toBe(request.task_result_callback_url);
    expect(call!.headers.get("authorization")).toBe("Bearer at-callback-token");
    expect(call!.headers.get("content-type")).toBe("application/vnd.api+json");
    expect(call!.text).toBe(GO_TFE_WIRE);
  });

  it("sends what the service's callback schema accepts, outcome for outcome", async () => {
    const { fetch, calls } = recordingFetch();
    await createCallbackClient({ fetch }).send(request, failed);
    const received = CallbackSchema.parse(calls[0]!.json);
    expect(received).toMatchObject({ status: "failed", message: failed.message, url: failed.url });
    expect(received.outcomes).toEqual([
      {
        outcomeId: "CHK-001",
        description: ISSUE_OUTCOME.description,
        body: ISSUE_OUTCOME.body,
        url: ISSUE_OUTCOME.url,
        tags: {
          "Cost Centre": [{ label: "platform", level: "none" }],
          Severity: ISSUE_OUTCOME.tags!.Severity,
          Status: ISSUE_OUTCOME.tags!.Status,
        },
      },
    ]);
  });

  it("omits outcomes when the request's capabilities do not include them", async () => {
    const { fetch, calls } = recordingFetch();
    await createCallbackClient({ fetch }).send({ ...request, capabilities: { outcomes: false } }, failed);
    expect(calls[0]!.json).toEqual({ data: { type: "task-results", attributes: { message: failed.message, status: "failed", url: failed.url } } });
  });

  it("leaves out empty optional attributes, as go-tfe's omitempty does", async () => {
    const { fetch, calls } = recordingFetch();
    await createCallbackClient({ fetch }).send(request, { status: "running", message: "", outcomes: [] });
    expect(calls[0]!.text).toBe('{"data":{"type":"task-results","attributes":{"status":"running"}}}');
  });

  it("refuses 251 outcomes before sending", async () => {
    const { fetch, calls } = recordingFetch();
    const outcomes = Array.from({ length: 251 }, (_, i) => ({ outcomeId: `O-${i}`, description: "d" }));
    const sending = createCallbackClient({ fetch }).send(request, { status: "passed", outcomes });
    await expect(sending).rejects.toBeInstanceOf(CallbackValidationError);
    await expect(sending).rejects.toMatchObject({ issues: [{ pointer: "/data/relationships/outcomes/data" }] });
    expect(calls).toHaveLength(0);
  });

  it("refuses a 33-character tag label, even when outcomes would not be sent", async () => {
    const { fetch, calls } = recordingFetch();
    const outcome = { outcomeId: "O-1", description: "d", tags: { Severity: [{ label: "x".repeat(33) }] } };
    for (const capabilities of [{ outcomes: true }, { outcomes: false }]) {
      const sending = createCallbackClient({ fetch }).send({ ...request, capabilities }, { status: "passed", outcomes: [outcome] });
      await expect(sending).rejects.toMatchObject({
        name: "CallbackValidationError",
        issues: [{ pointer: "/data/relationships/outcomes/data/0/attributes/tags/Severity/0/label" }],
      });
    }
    expect(calls).toHaveLength(0);
  });

  it("lists every problem: a status the service refuses, a long message and an empty outcome id", async () => {
    const { fetch } = recordingFetch();
    const update = { status: "errored", message: "m".repeat(1001), outcomes: [{ outcomeId: "", description: "d" }] };
    const error = await createCallbackClient({ fetch })
      .send(request, update as unknown as Parameters<ReturnType<typeof createCallbackClient>["send"]>[1])
      .catch((e: unknown) => e);
    expect((error as CallbackValidationError).issues.map((issue) => issue.pointer).sort()).toEqual([
      "/data/attributes/message",
      "/data/attributes/status",
      "/data/relationships/outcomes/data/0/attributes/outcome-id",
    ]);
  });

  it("surfaces a JSON:API 422 as a CallbackError with the status and error objects", async () => {
    const errors = [{ status: "422", title: "invalid attribute", detail: "Status is not accepted", source: { pointer: "/data/attributes/status" } }];
    const { fetch } = recordingFetch(
      () => new Response(JSON.stringify({ errors }), { status: 422, headers: { "Content-Type": "application/vnd.api+json" } }),
    );
    const error = await createCallbackClient({ fetch }).send(request, { status: "passed" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CallbackError);
    expect(isCallbackError(error)).toBe(true);
    expect(error).toMatchObject({ status: 422, errors });
    expect((error as Error).message).toBe("Run task callback failed with HTTP 422: Status is not accepted");
  });

  it("reports a non-2xx answer without a JSON:API body with no error objects", async () => {
    const { fetch } = recordingFetch(() => new Response("Bad Gateway", { status: 502 }));
    await expect(createCallbackClient({ fetch }).send(request, { status: "passed" })).rejects.toMatchObject({ status: 502, errors: [] });
  });

  it("does not follow redirects with the token", async () => {
    const seen: RequestInit[] = [];
    const fetch = async (_input: string, init: RequestInit) => {
      seen.push(init);
      return new Response(null, { status: 200 });
    };
    await createCallbackClient({ fetch }).send(request, { status: "passed" });
    expect(seen[0]!.redirect).toBe("manual");
  });

  it("uses the global fetch when none is given", async () => {
    const { fetch, calls } = recordingFetch();
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => fetch(String(input), init ?? {}));
    try {
      await createCallbackClient().send(request, { status: "passed" });
    } finally {
      spy.mockRestore();
    }
    expect(calls).toHaveLength(1);
  });
});
