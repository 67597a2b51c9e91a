/**
 * Shared by the framework-mount smoke tests: a seeded runplane, server shutdown, and one suite of
 * real-HTTP requests that every mount must answer the same way.
 */
import type { Server } from "node:http";
import { expect, it } from "vitest";
import { createMemoryStorage } from "../adapters/memory/index.js";
import { createRunplane, generateKey, silentLogger, type Runplane } from "../src/index.js";

export const WORKSPACE_ID = "ws-a";
export const POLICY_SET_ID = "polset-a";
export const OWN_ROUTE = { path: "/healthz", text: "ok" } as const;
/** Where clients reach the mounted app: absolute links are built on it, never on the Host header (D7). */
export const PUBLIC_URL = "https://runplane.example";

/** A memory-backed runplane with organization `acme`, project, workspace `ws-a`, policy set `polset-a` and an owners token. */
export async function createSeededRunplane(): Promise<{ runplane: Runplane; ownerToken: string }> {
  const runplane = createRunplane({
    storage: createMemoryStorage(),
    logger: silentLogger,
    keyring: { keys: [{ id: "k1", key: generateKey() }] },
    publicUrl: PUBLIC_URL,
  });
  const d = runplane.directory;
  await d.organizations.create({ name: "acme" });
  await d.users.create({ id: "user-owner", username: "owner" });
  await d.projects.create({ id: "prj-a", name: "alpha", organization: "acme" });
  await d.workspaces.create({ id: WORKSPACE_ID, name: "alpha-ws", organization: "acme", projectId: "prj-a" });
  await d.policySets.create({ id: POLICY_SET_ID, name: "guardrails", organization: "acme" });
  await d.teams.create({ id: "team-owners", name: "owners", owners: true, organization: "acme", members: ["user-owner"] });
  const { token } = await d.createApiToken({ organization: "acme", kind: "user", userId: "user-owner" });
  return { runplane, ownerToken: token };
}

/** The `http://127.0.0.1:<port>` of a listening server. */
export function baseUrlOf(server: Server): string {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("server is not listening on TCP");
  return `http://127.0.0.1:${address.port}`;
}

/** Closes a server, dropping keep-alive connections left open by fetch. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}

export interface MountedApp {
  baseUrl: string;
  ownerToken: string;
}

export interface MountSuiteOptions {
  /**
   * Whether body errors (malformed JSON, oversized body) reach runplane and come back as JSON:API
   * documents. False when a framework body parser runs first and answers them itself.
   */
  bodyErrorsFromRunplane: boolean;
}

const JSON_API = "application/vnd.api+json";

export interface Call {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** One request over real HTTP; `token: null` sends none, a string `body` is sent as is. */
export async function call(
  app: MountedApp,
  method: string,
  path: string,
  init: { body?: unknown; contentType?: string; token?: string | null } = {},
): Promise<Call> {
  const headers: Record<string, string> = {};
  const token = init.token === undefined ? app.ownerToken : init.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
    headers["content-type"] = init.contentType ?? JSON_API;
  }
  const response = await fetch(`${app.baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

const VARS = `/api/v2/workspaces/${WORKSPACE_ID}/vars`;
const PARAMS = `/api/v2/policy-sets/${POLICY_SET_ID}/parameters`;
const vars = (attributes: Record<string, unknown>, id?: string) => ({ data: { type: "vars", ...(id ? { id } : {}), attributes } });

function expectJsonApiError(res: Call, status: number): void {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe(JSON_API);
  expect(res.json.errors[0].status).toBe(String(status));
}

const createVar = (app: () => MountedApp, attributes: Record<string, unknown>) => call(app(), "POST", VARS, { body: vars(attributes) });

/** The API and the app's own route side by side; workspace variables through the mount. */
function variableSmokeCases(app: () => MountedApp): void {
  it("answers ping with 204 and no body", async () => {
    const res = await call(app(), "GET", "/api/v2/ping", { token: null });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
  });

  it("still serves the app's own route next to the API", async () => {
    const res = await call(app(), "GET", OWN_ROUTE.path, { token: null });
    expect(res.status).toBe(200);
    expect(res.text).toBe(OWN_ROUTE.text);
  });

  it("creates a workspace variable with 201 and echoes its attributes", async () => {
    const res = await createVar(app, { key: "region", value: "eu-west-1", category: "env", description: "where" });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe(JSON_API);
    expect(res.json.data.attributes).toMatchObject({ key: "region", value: "eu-west-1", category: "env", description: "where", sensitive: false });
  });

  it("lists, shows, updates and deletes a workspace variable", async () => {
    const id = (await createVar(app, { key: "region", value: "eu-west-1", category: "env" })).json.data.id as string;

    const list = await call(app(), "GET", VARS);
    expect(list.status).toBe(200);
    expect(list.json.data.map((d: any) => d.id)).toEqual([id]);

    const show = await call(app(), "GET", `${VARS}/${id}`);
    expect(show.status).toBe(200);
    expect(show.json.data.attributes.value).toBe("eu-west-1");

    const patch = await call(app(), "PATCH", `${VARS}/${id}`, { body: vars({ value: "us-east-1" }, id) });
    expect(patch.status).toBe(200);
    expect(patch.json.data.attributes.value).toBe("us-east-1");
    expect((await call(app(), "GET", `${VARS}/${id}`)).json.data.attributes.value).toBe("us-east-1");

    const del = await call(app(), "DELETE", `${VARS}/${id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await call(app(), "GET", `${VARS}/${id}`)).status).toBe(404);
  });

  it("accepts a plain application/json body as well as application/vnd.api+json", async () => {
    const res = await call(app(), "POST", VARS, { body: vars({ key: "plain", value: "json", category: "terraform" }), contentType: "application/json" });
    expect(res.status).toBe(201);
    expect(res.json.data.attributes).toMatchObject({ key: "plain", value: "json" });
  });

  it("round-trips a 200 KiB value, well under the 1 MiB body limit", async () => {
    const value = "x".repeat(200 * 1024);
    const res = await createVar(app, { key: "big", value, category: "env" });
    expect(res.status).toBe(201);
    expect(res.json.data.attributes.value).toBe(value);
  });
}

/** Policy set parameters, paged only when asked, with absolute links on the public URL (the mount passes path and query). */
function parameterSmokeCases(app: () => MountedApp): void {
  it("creates policy set parameters and lists them without pagination", async () => {
    for (const key of ["a", "b"]) expect((await call(app(), "POST", PARAMS, { body: vars({ key, value: key, category: "policy-set" }) })).status).toBe(201);
    const res = await call(app(), "GET", PARAMS);
    expect(res.status).toBe(200);
    expect(res.json.data.map((d: any) => d.attributes.key)).toEqual(["a", "b"]);
    expect(res.json.meta).toBeUndefined();
  });

  it("paginates policy set parameters when page parameters are given", async () => {
    for (const key of ["a", "b", "c"]) await call(app(), "POST", PARAMS, { body: vars({ key, value: key, category: "policy-set" }) });
    const res = await call(app(), "GET", `${PARAMS}?page%5Bnumber%5D=2&page%5Bsize%5D=2`);
    expect(res.status).toBe(200);
    expect(res.json.data.map((d: any) => d.attributes.key)).toEqual(["c"]);
    expect(res.json.meta.pagination).toMatchObject({ "current-page": 2, "page-size": 2, "total-count": 3 });
    // Links are absolute on runplane's public URL (D7), whatever host the mount was reached by.
    expect(res.json.links.first).toBe(`${PUBLIC_URL}${PARAMS}?page%5Bnumber%5D=1&page%5Bsize%5D=2`);
  });
}

/** The mount's error answers: JSON:API documents, or its own for bodies it parses itself. */
function errorSmokeCases(app: () => MountedApp, options: MountSuiteOptions): void {
  it("answers an unknown API path with a JSON:API 404", async () => {
    expectJsonApiError(await call(app(), "GET", "/api/v2/no-such-thing"), 404);
  });

  it("answers 401 without a token", async () => {
    expectJsonApiError(await call(app(), "GET", VARS, { token: null }), 401);
  });

  it("answers a text/plain body with 415", async () => {
    expectJsonApiError(await call(app(), "POST", VARS, { body: "key=region", contentType: "text/plain" }), 415);
  });

  it("answers a malformed JSON body with 400", async () => {
    const res = await call(app(), "POST", VARS, { body: '{"data": {' });
    if (options.bodyErrorsFromRunplane) expectJsonApiError(res, 400);
    else expect(res.status).toBe(400);
  });

  it("answers a body over 1 MiB with 413", async () => {
    const res = await call(app(), "POST", VARS, { body: JSON.stringify(vars({ key: "k", value: "x".repeat(1024 * 1024), category: "env" })) });
    if (options.bodyErrorsFromRunplane) expectJsonApiError(res, 413);
    else expect(res.status).toBe(413);
  });
}

/**
 * Registers the smoke cases of a framework mount inside the caller's `describe`. `app()` returns the
 * app started by the caller's `beforeEach`.
 */
export function mountSuite(app: () => MountedApp, options: MountSuiteOptions): void {
  variableSmokeCases(app);
  parameterSmokeCases(app);
  errorSmokeCases(app, options);
}
