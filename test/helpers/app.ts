import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createRunplane, generateKey, silentLogger, type HttpRequest, type HttpTransport, type RunplaneOptions } from "../../src/index.js";
import type { Storage } from "../../src/storage/types.js";
import { checkResponsesOf } from "./openapi-check.js";

export interface TestApp {
  runplane: ReturnType<typeof createRunplane>;
  storage: Storage;
  ownerToken: string;
  /** Token of `user-dev`, a member of `team-devs` only. */
  devToken: string;
  /** Owners token of another organization. */
  otherOrgToken: string;
  call(method: string, path: string, init?: CallInit): Promise<TestResponse>;
}

export interface CallInit {
  token?: string | null;
  body?: unknown;
  /** Raw body text (sent as is). */
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/**
 * A runplane over the given storage with a small directory: organization `acme` (project `prj-a`,
 * workspace `ws-a`, policy set `polset-a`, teams `team-owners` and `team-devs`, users `user-owner` and
 * `user-dev`) and organization `other` with its own owners.
 */
export async function createTestApp(options: Partial<RunplaneOptions> & { storage?: Storage } = {}): Promise<TestApp> {
  const storage = options.storage ?? createMemoryStorage();
  // Every response the suites receive is checked against the OpenAPI document.
  const runplane = checkResponsesOf(createRunplane({
    logger: silentLogger,
    clock: tickingClock(),
    keyring: { keys: [{ id: "k1", key: generateKey() }] },
    transport: answering200(),
    ...options,
    storage,
  }));
  const d = runplane.directory;
  for (const org of ["acme", "other"]) await d.organizations.create({ name: org });
  await d.users.create({ id: "user-owner", username: "owner" });
  await d.users.create({ id: "user-dev", username: "dev" });
  await d.projects.create({ id: "prj-a", name: "alpha", organization: "acme" });
  await d.workspaces.create({ id: "ws-a", name: "alpha-ws", organization: "acme", projectId: "prj-a" });
  await d.workspaces.create({ id: "ws-b", name: "beta-ws", organization: "acme", projectId: "prj-a" });
  await d.policySets.create({ id: "polset-a", name: "guardrails", organization: "acme" });
  await d.teams.create({ id: "team-owners", name: "owners", owners: true, organization: "acme", members: ["user-owner"] });
  await d.teams.create({ id: "team-devs", name: "devs", organization: "acme", members: ["user-dev"] });
  await d.teams.create({ id: "team-other-owners", name: "owners", owners: true, organization: "other" });
  const ownerToken = (await d.createApiToken({ organization: "acme", kind: "user", userId: "user-owner" })).token;
  const devToken = (await d.createApiToken({ organization: "acme", kind: "user", userId: "user-dev" })).token;
  const otherOrgToken = (await d.createApiToken({ organization: "other", kind: "team", teamId: "team-other-owners" })).token;

  const call = async (method: string, path: string, init: CallInit = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...init.headers };
    const token = init.token === undefined ? ownerToken : init.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (init.raw !== undefined) body = init.raw;
    else if (init.body !== undefined) body = JSON.stringify(init.body);
    if (body !== undefined) headers["content-type"] = init.contentType ?? "application/vnd.api+json";
    const response = await runplane.handler(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  };
  return { runplane, storage, ownerToken, devToken, otherOrgToken, call };
}

/** A fake clock starting at 2026-01-01 that advances 1 ms per reading, so creation order is total. */
export function tickingClock(start = Date.UTC(2026, 0, 1)): () => Date {
  let t = start;
  return () => new Date(t++);
}

/** A JSON:API `vars` create/update body. */
export const varsBody = (attributes: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  data: { type: "vars", attributes, ...extra },
});

/**
 * A transport that answers every request 200 without any network, recording what it was asked to
 * send: the test apps' default, so creating a run task passes its verification request (D15)
 * without contacting anything. Delivery tests replace it with real loopback receivers.
 */
export function answering200(): HttpTransport & { sent: HttpRequest[] } {
  const sent: HttpRequest[] = [];
  return {
    sent,
    async send(req) {
      sent.push(req);
      return { status: 200, headers: {}, body: "", bodyTruncated: false };
    },
    async close() {},
  };
}
