import {
  buildRunTaskRequest,
  serializeRunTaskRequest,
  signPayload,
  type RunTaskRequestInput,
} from "../../src/domain/run-task-request.js";
import type { RunTaskRequest } from "../../src/schemas/run-tasks.js";

export const HMAC_KEY = "integration-secret";

export const requestInput = (overrides: Partial<RunTaskRequestInput> = {}): RunTaskRequestInput => ({
  stage: "post_plan",
  accessToken: "at-callback-token",
  urls: { publicUrl: "https://runplane.example", appUrl: "https://app.runplane.example", basePath: "/api/v2" },
  organizationName: "acme",
  run: {
    id: "run-AAAAAAAAAAAAAAAA",
    createdAt: "2024-01-01T00:00:00.000Z",
    createdBy: "someuser",
    message: "Triggered via API",
    isSpeculative: false,
    planId: "plan-BBBBBBBBBBBBBBBB",
  },
  configurationVersion: { id: "cv-CCCCCCCCCCCCCCCC", downloadable: true },
  workspace: { id: "ws-DDDDDDDDDDDDDDDD", name: "networking", workingDirectory: "infra" },
  vcs: {
    branch: "main",
    repoUrl: "https://git.example/acme/networking",
    commitUrl: "https://git.example/acme/networking/commit/abc123",
    pullRequestUrl: null,
  },
  taskResult: { id: "taskrs-EEEEEEEEEEEEEEEE", enforcementLevel: "mandatory" },
  ...overrides,
});

/** A full spec 4.1 payload, built by runplane's own builder. */
export const runTaskRequest = (overrides: Partial<RunTaskRequestInput> = {}): RunTaskRequest =>
  buildRunTaskRequest(requestInput(overrides));

/** The POST the service would send: the bytes serialized once and signed (decision D14). */
export function signedPost(
  payload: unknown,
  options: { key?: string | null; header?: string; url?: string } = {},
): Request {
  const bytes =
    payload instanceof Uint8Array ? payload : serializeRunTaskRequest(payload as RunTaskRequest);
  const key = options.key === undefined ? HMAC_KEY : options.key;
  return new Request(options.url ?? "http://integration.test/run-task", {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      [options.header ?? "X-TFC-Task-Signature"]: key === null ? "" : signPayload(bytes, key),
    },
    // A copy typed over a plain ArrayBuffer, which is what BodyInit accepts.
    body: new Uint8Array(bytes),
  });
}

export interface RecordedCall {
  url: string;
  method: string;
  headers: Headers;
  text: string;
  json: unknown;
}

/**
 * A fetch in the shape the lead will use against runplane (`new Request(input, init)`), recording
 * every call and answering with `respond` (default 200, empty body).
 */
export function recordingFetch(respond: (call: RecordedCall) => Response = () => new Response(null, { status: 200 })) {
  const calls: RecordedCall[] = [];
  const fetch = async (input: string, init: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const text = await request.text();
    const call = { url: request.url, method: request.method, headers: request.headers, text, json: (text === "" ? undefined : JSON.parse(text)) as unknown };
    calls.push(call);
    return respond(call);
  };
  return { fetch, calls };
}
