import { readFileSync } from "node:fs";
import { auditTrailRoutes } from "../../src/http/routes/audit-trail.js";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createRunplane, generateKey, silentLogger, type Dialect, type RunplaneOptions } from "../../src/index.js";
import { agentTokenRoutes } from "../../src/http/routes/agent-tokens.js";
import { agentRoutes } from "../../src/http/routes/agents.js";
import { teamTokenRoutes } from "../../src/http/routes/team-tokens.js";
import { artifactRoutes } from "../../src/http/routes/artifacts.js";
import { pingRoutes } from "../../src/http/routes/ping.js";
import { policySetParameterRoutes } from "../../src/http/routes/policy-set-parameters.js";
import { TASK_INCLUDES } from "../../src/http/routes/run-task-support.js";
import { runTaskRoutes } from "../../src/http/routes/run-tasks.js";
import { taskStageRoutes } from "../../src/http/routes/task-stages.js";
import { deliveryAttemptRoutes } from "../../src/http/routes/delivery-attempts.js";
import { teamProjectRoutes } from "../../src/http/routes/team-projects.js";
import { variableRoutes } from "../../src/http/routes/variables.js";
import { commentRoutes } from "../../src/http/routes/comments.js";
import { planRoutes } from "../../src/http/routes/plans.js";
import { policyCheckRoutes } from "../../src/http/routes/policy-checks.js";
import { runEventRoutes } from "../../src/http/routes/run-events.js";
import { runRoutes } from "../../src/http/routes/runs.js";
import { runListRoutes } from "../../src/http/routes/run-lists.js";
import { configurationVersionRoutes } from "../../src/http/routes/configuration-versions.js";
import { operationsFor } from "../../src/openapi/document.js";
import { createResponseChecker } from "../helpers/openapi-check.js";

const make = (options: Partial<RunplaneOptions> = {}) =>
  createRunplane({ storage: createMemoryStorage(), logger: silentLogger, keyring: { keys: [{ id: "k", key: generateKey() }] }, ...options });
const template = (path: string) => path.replace(/:\w+/g, "{}").replace(/\{\w+\}/g, "{}");

/** `GET /ping`, or `GET`, `PATCH`, `DELETE /tasks/:id`: every method and path of the endpoint table (docs/reference/endpoints.md). */
function readmeEndpoints(): string[] {
  const doc = readFileSync(new URL("../../docs/reference/endpoints.md", import.meta.url), "utf8");
  const section = doc.slice(0, doc.indexOf("## OpenAPI description"));
  const out = new Set<string>();
  for (const line of section.split("\n")) {
    const cell = /^\| (`.+?) \|/.exec(line)?.[1] ?? "";
    for (const m of cell.matchAll(/((?:(?:GET|POST|PATCH|DELETE)`, `)*)(GET|POST|PATCH|DELETE) (\/[^`?]*)/g)) {
      const methods = [...m[1]!.split("`, `").filter(Boolean), m[2]!];
      for (const method of methods) out.add(`${method} ${template(m[3]!)}`);
    }
  }
  return [...out];
}

describe("OpenAPI description", () => {
  it.each(["default", "hcp-terraform"] as Dialect[])("is a valid OpenAPI 3.1 document in the %s dialect", async (dialect) => {
    const runplane = make({ dialect, basePath: "/tfe/api/v2" });
    const doc = runplane.openapi();
    const result = await new Validator().validate(structuredClone(doc) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers).toEqual([{ url: "/tfe/api/v2" }]);
    // decision D1: the dialect's own category words.
    const category = (doc.components as any).schemas.WorkspaceVariable.properties.attributes.properties.category;
    expect(category.enum).toEqual(dialect === "default" ? ["config", "env"] : ["terraform", "env"]);
    await runplane.close();
  });

  it("describes every route the handler serves, and every row of the endpoint table in docs/reference/endpoints.md", async () => {
    const runplane = make();
    const doc = runplane.openapi();
    const described = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${template(path)}`));
    const served = runplane.routes.map((r) => `${r.method} ${template(r.path.slice("/api/v2".length))}`);
    expect(described.sort()).toEqual([...served].sort());
    const readme = readmeEndpoints();
    expect(readme.length).toBeGreaterThan(30);
    for (const endpoint of readme) expect(described, endpoint).toContain(endpoint);
    await runplane.close();
  });

  it("documents a body, its errors and the credential per operation", async () => {
    const runplane = make();
    const doc = runplane.openapi() as any;
    const create = doc.paths["/workspaces/{workspace_id}/vars"].post;
    expect(Object.keys(create.responses).sort()).toEqual(["201", "400", "401", "404", "413", "415", "422", "429", "500", "503"]);
    // decision D28: a storage that cannot be reached is 503 with Retry-After; /ping reads no storage.
    expect(create.responses["503"].headers["Retry-After"].schema).toEqual({ type: "integer", minimum: 1 });
    expect(Object.keys(doc.paths["/ping"].get.responses)).not.toContain("503");
    // decision D33: any route may be rate limited (429 with Retry-After and X-RateLimit-*), except /ping.
    expect(Object.keys(create.responses["429"].headers).sort()).toEqual(["Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]);
    expect(Object.keys(doc.paths["/ping"].get.responses)).not.toContain("429");
    // A success carries the X-RateLimit-* headers too (with the limit on); /ping also TFP-API-Version.
    const RATE_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];
    expect(Object.keys(create.responses["201"].headers).sort()).toEqual(RATE_HEADERS);
    expect(Object.keys(doc.paths["/ping"].get.responses["204"].headers).sort()).toEqual(["TFP-API-Version", ...RATE_HEADERS]);
    expect(doc.components.headers["X-RateLimit-Reset"].schema).toEqual({ type: "string" });
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(operations)) {
        const success = Object.keys(op.responses).find((status) => status.startsWith("2"))!;
        expect(Object.keys(op.responses[success].headers ?? {}), `${method} ${path}`).toEqual(expect.arrayContaining(RATE_HEADERS));
      }
    }
    expect(create.requestBody.content["application/vnd.api+json"].schema.properties.data.properties.type.enum).toEqual(["vars"]);
    // decision D1: both dialects accept every category word on input.
    expect(create.requestBody.content["application/vnd.api+json"].schema.properties.data.properties.attributes.properties.category.enum).toEqual(["config", "terraform", "env"]);
    expect(create.security).toEqual([{ apiToken: [] }]);
    expect(doc.paths["/task-results/{task_result_id}/callback"].patch.security).toEqual([{ accessToken: [] }]);
    // decision D17a: an unknown result is 401, never 404.
    expect(Object.keys(doc.paths["/task-results/{task_result_id}/callback"].patch.responses).sort()).toEqual(["200", "400", "401", "409", "413", "415", "422", "429", "500", "503"]);
    expect(doc.paths["/ping"].get.security).toEqual([]);
    expect(Object.keys(doc.paths["/plans/{plan_id}/json-output"].get.responses["200"].content)).toEqual(["application/json"]);
    // hmac-key is write-only (D11): accepted on create, always null in the response.
    expect(create.requestBody).toBeDefined();
    expect(doc.components.schemas.RunTask.properties.attributes.properties["hmac-key"]).toMatchObject({ type: "null" });
    expect(runplane.openapi()).toBe(runplane.openapi());
    await runplane.close();
  });

  it("refuses a route table that has a route without documentation, naming it", () => {
    const extra = [...pingRoutes, { ...pingRoutes[0]!, path: "/pong" }];
    expect(() => operationsFor(extra, "default")).toThrow(/undocumented GET \/pong/);
  });

  it("refuses a route whose accepted query differs from the parameters its operation documents (D30)", () => {
    const all = [...pingRoutes, ...teamProjectRoutes, ...variableRoutes, ...policySetParameterRoutes, ...agentTokenRoutes, ...agentRoutes, ...teamTokenRoutes, ...runTaskRoutes, ...taskStageRoutes, ...artifactRoutes];
    all.push(...runRoutes, ...runListRoutes, ...configurationVersionRoutes, ...planRoutes, ...runEventRoutes, ...commentRoutes, ...policyCheckRoutes, ...deliveryAttemptRoutes, ...auditTrailRoutes);
    expect(() => operationsFor(all, "default")).not.toThrow();
    const changed = all.map((r) => (r.method === "DELETE" && r.path === "/tasks/:task_id" ? { ...r, query: { include: TASK_INCLUDES } } : r));
    expect(() => operationsFor(changed, "default")).toThrow(/differ from what the routes accept: DELETE \/tasks\/:task_id$/);
  });
});

describe("the response check", () => {
  const runplane = make();
  const check = createResponseChecker(runplane.openapi());
  const url = "http://localhost/api/v2/workspaces/ws-a/vars/var-1";
  const variable = (attributes: Record<string, unknown>) =>
    JSON.stringify({
      data: {
        id: "var-1",
        type: "vars",
        attributes: { key: "k", value: "v", sensitive: false, category: "env", hcl: false, "created-at": "2026-01-01T00:00:00.000Z", description: null, "version-id": "v1", ...attributes },
        relationships: { configurable: { data: { id: "ws-a", type: "workspaces" }, links: { related: "/api/v2/organizations/acme/workspaces/alpha" } } },
        links: { self: "/api/v2/workspaces/ws-a/vars/var-1" },
      },
    });
  const media = "application/vnd.api+json";

  it("accepts a response as documented", () => {
    expect(() => check("GET", url, 200, media, variable({}))).not.toThrow();
  });
  it("fails an undocumented attribute, a wrong value type, an undocumented status or content type", () => {
    expect(() => check("GET", url, 200, media, variable({ secret: "x" }))).toThrow(/additional properties/);
    expect(() => check("GET", url, 200, media, variable({ category: "config-ish" }))).toThrow(/allowed values/);
    expect(() => check("GET", url, 201, media, variable({}))).toThrow(/status not documented/);
    expect(() => check("GET", url, 200, "text/html", variable({}))).toThrow(/content type/);
    expect(() => check("DELETE", url, 204, null, "x")).toThrow(/without a body/);
  });
  it("holds an unknown path to the error document", () => {
    expect(() => check("GET", "http://localhost/api/v2/nope", 404, media, JSON.stringify({ errors: [{ status: "404", title: "not found" }] }))).not.toThrow();
    expect(() => check("GET", "http://localhost/api/v2/nope", 404, media, JSON.stringify({ errors: [{ status: 404, title: "Not Found" }] }))).toThrow();
    expect(() => check("GET", "http://localhost/api/v2/nope", 200, media, "{}")).toThrow(/no documented operation/);
  });
});
