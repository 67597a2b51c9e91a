import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { RunplaneOptions } from "../../src/index.js";
import { STORAGES } from "../helpers/storages.js";
import { attachTask, callbackBody, createTask, runTaskApp, sendCallback, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";

/**
 * Wire fidelity (D1, D24): in the hcp-terraform dialect every document of the run's read side has
 * each attribute and relation of the go-tfe struct it decodes into, with a value of the field's
 * type, as hashicorp/jsonapi decodes it (the primary type must match, times tagged `iso8601` must
 * end in `Z`, a relation's linkage names its type). The expected sets are go-tfe's jsonapi tags,
 * kept as a fixture with their sources (test/fixtures/go-tfe/structs.json).
 */

type FieldType = string | Record<string, string> | [Record<string, string>];
interface Struct {
  primary: string;
  attributes: Record<string, FieldType>;
  relations: Record<string, ["one" | "many", string]>;
}
const STRUCTS = JSON.parse(readFileSync(new URL("../fixtures/go-tfe/structs.json", import.meta.url), "utf8")) as Record<string, Struct>;

const ISO8601 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
/** Documented as null when there is none: the brief's `log-read-url` without a log provider. */
const NULLABLE = new Set(["log-read-url"]);

function valueProblems(path: string, type: FieldType, value: unknown): string[] {
  if (Array.isArray(type)) {
    if (!Array.isArray(value)) return [`${path}: expected an array`];
    return value.flatMap((item, i) => valueProblems(`${path}[${i}]`, type[0], item));
  }
  if (typeof type === "object") {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${path}: expected an object`];
    const record = value as Record<string, unknown>;
    if ("*" in type) return Object.entries(record).flatMap(([k, v]) => valueProblems(`${path}.${k}`, type["*"]!, v));
    return Object.entries(type).flatMap(([k, t]) => (k in record ? valueProblems(`${path}.${k}`, t, record[k]) : [`${path}.${k}: missing`]));
  }
  const ok: Record<string, (v: unknown) => boolean> = {
    string: (v) => typeof v === "string",
    bool: (v) => typeof v === "boolean",
    int: (v) => Number.isInteger(v),
    iso8601: (v) => v === null || (typeof v === "string" && ISO8601.test(v)),
    rfc3339: (v) => typeof v === "string" && RFC3339.test(v),
    "string[]": (v) => Array.isArray(v) && v.every((s) => typeof s === "string"),
  };
  return ok[type]!(value) ? [] : [`${path}: ${JSON.stringify(value)} is not ${type}`];
}

/** Every way `resource` would not decode into `struct` as go-tfe expects it; empty when it does. */
function problems(name: string, resource: any): string[] {
  const struct = STRUCTS[name]!;
  const out: string[] = [];
  if (resource.type !== struct.primary) out.push(`type ${resource.type} is not ${struct.primary}`);
  for (const [attr, type] of Object.entries(struct.attributes)) {
    if (!(attr in resource.attributes)) out.push(`attribute ${attr}: missing`);
    else if (!(NULLABLE.has(attr) && resource.attributes[attr] === null)) out.push(...valueProblems(`attribute ${attr}`, type, resource.attributes[attr]));
  }
  for (const [rel, [kind, type]] of Object.entries(struct.relations)) {
    const data = resource.relationships?.[rel]?.data;
    if (data === undefined) out.push(`relation ${rel}: missing`);
    else if (kind === "many" ? !Array.isArray(data) : Array.isArray(data)) out.push(`relation ${rel}: not to-${kind}`);
    else for (const link of kind === "many" ? data : data === null ? [] : [data]) if (link.type !== type || typeof link.id !== "string") out.push(`relation ${rel}: linkage ${JSON.stringify(link)}`);
  }
  return out;
}

const HOST: Partial<RunplaneOptions> = {
  runs: {
    details: () => ({
      status: "applied",
      statusTimestamps: { "applied-at": "2026-01-01T00:10:00Z" },
      hasChanges: true,
      isDestroy: false,
      autoApply: true,
      source: "tfe-api",
      terraformVersion: "1.9.5",
      plan: { status: "finished", resourceAdditions: 1, resourceChanges: 0, resourceDestructions: 0, statusTimestamps: { "finished-at": "2026-01-01T00:05:00Z" } },
      apply: { status: "finished", resourceAdditions: 1, resourceChanges: 0, resourceDestructions: 0 },
    }),
    policyChecks: () => [{ id: "polchk-full", status: "passed", scope: "organization", result: { result: true, passed: 1, totalFailed: 0, hardFailed: 0, softFailed: 0, advisoryFailed: 0, duration: 10 }, isOverridable: false, canOverride: false }, { id: "polchk-bare", status: "pending" }],
  },
  artifacts: { planLog: () => "plan log", applyLog: () => "apply log" },
};

describe.each(STORAGES.slice(0, 1))("go-tfe decodes the run read side in the hcp-terraform dialect ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());

  /** Every document of one run: after a task result, an override and a comment. */
  async function documents(options: Partial<RunplaneOptions>) {
    const a: RunTaskApp = await runTaskApp(setup, (d) => (dispose = d), { dialect: "hcp-terraform", overridableTasks: true, ...options });
    await attachTask(a, await createTask(a, "scan"), "mandatory", ["post_plan"]);
    const { run, stages } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go", createdBy: "user-owner" });
    await a.runplane.runTasks.startStage(run.id, "post_plan");
    const [result] = await a.runplane.runTasks.listResults(stages[0]!.id);
    await sendCallback(a, result!.id, await tokenOf(a, result!.id), callbackBody("failed"));
    await a.call("POST", `/api/v2/task-stages/${stages[0]!.id}/actions/override`, { body: {}, contentType: "application/json" });
    const comment = (await a.call("POST", `/api/v2/runs/${run.id}/comments`, { body: { data: { type: "comments", attributes: { body: "ok" } } } })).json.data;
    const get = async (path: string) => (await a.call("GET", `/api/v2${path}`)).json;
    return {
      Run: [(await get(`/runs/${run.id}/`)).data],
      Plan: [(await get(`/runs/${run.id}/plan`)).data, (await get(`/plans/${run.planId}`)).data],
      Apply: [(await get(`/runs/${run.id}/apply`)).data, (await get(`/applies/${run.applyId}`)).data],
      RunEvent: (await get(`/runs/${run.id}/run-events`)).data,
      Comment: [comment, ...(await get(`/runs/${run.id}/comments`)).data, (await get(`/comments/${comment.id}`)).data],
      PolicyCheck: (await get(`/runs/${run.id}/policy-checks`)).data,
    };
  }

  it.each([
    ["the host gives nothing", {}],
    ["the host gives everything", HOST],
  ] as const)("every document decodes when %s", async (_, options) => {
    const docs = await documents(options);
    for (const [name, resources] of Object.entries(docs)) {
      if (name === "PolicyCheck" && options === HOST) expect(resources).toHaveLength(2);
      for (const resource of resources) expect(problems(name, resource), `${name} ${resource.id}`).toStrictEqual([]);
    }
    expect(docs.RunEvent.length).toBeGreaterThan(4);
  });

  it("finds a document that would not decode: the check can fail", () => {
    const run = { type: "runs", attributes: { "created-at": "2026-01-01T00:00:00+00:00", "has-changes": "yes" }, relationships: { plan: { data: { type: "plan", id: "p" } } } };
    const found = problems("Run", run);
    expect(found).toContain('attribute created-at: "2026-01-01T00:00:00+00:00" is not iso8601');
    expect(found).toContain('attribute has-changes: "yes" is not bool');
    expect(found).toContain("attribute status: missing");
    expect(found).toContain('relation plan: linkage {"type":"plan","id":"p"}');
    expect(found).toContain("relation task-stages: missing");
    expect(problems("Comment", { type: "comment", attributes: { body: "x" } })).toStrictEqual(["type comment is not comments"]);
  });
});
