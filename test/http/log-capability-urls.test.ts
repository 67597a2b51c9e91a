import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createKeyring, createRunplane, generateKey, type Logger, type RunplaneOptions } from "../../src/index.js";
import { STORAGES } from "../helpers/storages.js";
import { attachTask, createTask, fakeClock, runTaskApp, type RunTaskApp } from "../helpers/run-tasks.js";

/**
 * decision D32: `log-read-url` is a capability URL. go-tfe's log reader and integrations GET it
 * with no Authorization header, replacing only its query (`limit`/`offset`); a forged, altered or
 * expired one is the same 404 as a missing object; any host sharing the keyring verifies it.
 */

const PLAN_LOG = "Terraform v1.9.8\n\nPlan: 1 to add, 0 to change, 0 to destroy.\n";
const APPLY_LOG = "null_resource.demo: Creating...\n\nApply complete! Resources: 1 added.\n";
const artifacts = { planLog: () => PLAN_LOG, applyLog: () => APPLY_LOG };

/** A request as go-tfe's log reader sends it: the URL as given, its query replaced, no credential. */
const fetchLog = (a: { runplane: { handler(r: Request): Promise<Response> } }, url: string, query = "") => {
  const u = new URL(url);
  u.search = query;
  return a.runplane.handler(new Request(u));
};

/** The capability of a log URL, and the URL with its capability replaced. */
const capabilityOf = (url: string): string => new URL(url).pathname.split("/").at(-1)!;
const withCapability = (url: string, capability: string): string => url.replace(capabilityOf(url), capability);

describe.each(STORAGES)("log-read-url capabilities, D32 ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const app = (options: Partial<RunplaneOptions> = {}): Promise<RunTaskApp> => runTaskApp(setup, (d) => (dispose = d), { artifacts, ...options });

  async function logUrls(a: RunTaskApp, workspaceId = "ws-a") {
    await attachTask(a, await createTask(a, `scan-${workspaceId}`), "mandatory", ["post_plan"], workspaceId);
    const { run } = await a.runplane.runTasks.createRun({ workspaceId, configurationVersionId: "cv-1", message: "go" });
    const plan = (await a.call("GET", `/api/v2/runs/${run.id}/plan`)).json.data.attributes["log-read-url"] as string;
    const apply = (await a.call("GET", `/api/v2/runs/${run.id}/apply`)).json.data.attributes["log-read-url"] as string;
    return { run, plan, apply };
  }

  it("serves the plan and the apply log to a request with no Authorization header, at an absolute unguessable URL", async () => {
    const a = await app();
    const { plan, apply } = await logUrls(a);
    expect(plan).toMatch(/^https:\/\/runplane\.example\/api\/v2\/logs\/rplog1\.[\w-]+\.[\w-]{43}$/);
    for (const [url, log] of [[plan, PLAN_LOG], [apply, APPLY_LOG]] as const) {
      const res = await fetchLog(a, url);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(await res.text()).toBe(log);
    }
    // Two runs' URLs differ; an Authorization header (anyone's) changes nothing.
    expect((await logUrls(a, "ws-b")).plan).not.toBe(plan);
    const withHeader = await a.runplane.handler(new Request(plan, { headers: { authorization: `Bearer ${a.devToken}` } }));
    expect(await withHeader.text()).toBe(PLAN_LOG);
  });

  it("reads the log in the limit/offset chunks go-tfe asks for, until an empty one", async () => {
    const a = await app();
    const { plan } = await logUrls(a);
    const bytes = new TextEncoder().encode(PLAN_LOG);
    let offset = 0;
    const read: number[] = [];
    for (;;) {
      const chunk = new Uint8Array(await (await fetchLog(a, plan, `limit=16&offset=${offset}`)).arrayBuffer());
      if (chunk.length === 0) break;
      read.push(...chunk);
      offset += chunk.length;
    }
    expect(new Uint8Array(read)).toStrictEqual(bytes);
    expect((await fetchLog(a, plan, "limit=-1&offset=0")).status).toBe(400);
  });

  it("answers a forged, altered or expired capability with the same 404 as a missing object", async () => {
    const a = await app();
    const mine = await logUrls(a);
    const other = await logUrls(a, "ws-b");
    const missing = await fetchLog(a, withCapability(mine.plan, "nothing-here"));
    expect(missing.status).toBe(404);
    const body = await missing.text();
    const [prefix, payload, mac] = capabilityOf(mine.plan).split(".") as [string, string, string];
    const claims = Buffer.from(payload, "base64url").toString("utf8");
    const altered = (text: string) => `${prefix}.${Buffer.from(text, "utf8").toString("base64url")}.${mac}`;
    const refused = {
      forged: `${prefix}.${payload}.${"A".repeat(43)}`,
      "other run": altered(claims.replace(mine.run.id, other.run.id)),
      "plan to apply": altered(claims.replace(/^plan/, "apply")),
      "later expiry": altered(claims.replace(/\n(\d+)\n/, (_, s: string) => `\n${Number(s) + 86_400}\n`)),
      "another run's mac": `${prefix}.${payload}.${capabilityOf(other.plan).split(".")[2]}`,
      "too long": `${prefix}.${"A".repeat(600)}.${mac}`,
      // Only the exact spelling is a capability: an encoded one would escape every redaction.
      "dots percent-encoded": `${prefix}%2E${payload}%2E${mac}`,
      "a letter percent-encoded": `%72${prefix.slice(1)}.${payload}.${mac}`,
    };
    for (const [what, capability] of Object.entries(refused)) {
      const res = await fetchLog(a, withCapability(mine.plan, capability), "limit=10&offset=0");
      expect(res.status, what).toBe(404);
      expect(await res.text(), what).toBe(body);
    }
    // Valid until the lifetime (default an hour) has passed, then the same 404.
    a.clock.advance(59 * 60_000);
    expect((await fetchLog(a, mine.apply)).status).toBe(200);
    a.clock.advance(2 * 60_000);
    const expired = await fetchLog(a, mine.apply);
    expect(expired.status).toBe(404);
    expect(await expired.text()).toBe(body);
  });

  it("honours option logUrls.lifetime", async () => {
    const a = await app({ logUrls: { lifetime: "5m" } });
    const { plan } = await logUrls(a);
    a.clock.advance(4 * 60_000);
    expect((await fetchLog(a, plan)).status).toBe(200);
    a.clock.advance(2 * 60_000);
    expect((await fetchLog(a, plan)).status).toBe(404);
  });
});

describe("log-read-url across hosts and key rotation (D32)", () => {
  const k1 = { id: "k1", key: generateKey() };
  const k2 = { id: "k2", key: generateKey() };
  const storage = createMemoryStorage();
  const host = (keys: (typeof k1)[], logger?: Logger) =>
    createRunplane({ storage, keyring: createKeyring({ keys }), clock: fakeClock(), publicUrl: "https://runplane.example", artifacts, host: false, ...(logger ? { logger } : {}) });
  const planUrlOf = async (runplane: ReturnType<typeof host>) => {
    const apiToken = await tokenFor(runplane);
    const { run } = await runplane.runTasks.createRun({ workspaceId: "ws-x", configurationVersionId: "cv-1", message: "go" });
    const res = await runplane.handler(new Request(`http://localhost/api/v2/runs/${run.id}/plan`, { headers: { authorization: `Bearer ${apiToken}` } }));
    return ((await res.json()) as any).data.attributes["log-read-url"] as string;
  };
  let seeded: Promise<string> | undefined;
  async function tokenFor(runplane: ReturnType<typeof host>): Promise<string> {
    seeded ??= (async () => {
      const d = runplane.directory;
      await d.organizations.create({ name: "acme" });
      await d.projects.create({ id: "prj-x", name: "x", organization: "acme" });
      await d.workspaces.create({ id: "ws-x", name: "x-ws", organization: "acme", projectId: "prj-x" });
      await d.teams.create({ id: "team-owners", name: "owners", owners: true, organization: "acme" });
      return (await d.createApiToken({ organization: "acme", kind: "team", teamId: "team-owners" })).token;
    })();
    return seeded;
  }

  it("verifies on another host sharing the keyring, after rotation too, and never on one without the key", async () => {
    const first = host([k1]);
    const url = await planUrlOf(first);
    expect(await (await fetchLog({ runplane: host([k1]) }, url)).text()).toBe(PLAN_LOG);
    // A host that rotated to k2 still holds k1: it verifies what k1 signed, and signs with k2.
    const rotated = host([k2, k1]);
    expect(await (await fetchLog({ runplane: rotated }, url)).text()).toBe(PLAN_LOG);
    const signedByK2 = await planUrlOf(rotated);
    expect((await fetchLog({ runplane: rotated }, signedByK2)).status).toBe(200);
    expect((await fetchLog({ runplane: first }, signedByK2)).status).toBe(404);
    expect((await fetchLog({ runplane: host([k2]) }, url)).status).toBe(404);
  });

  it("never writes the capability in a log line", async () => {
    const lines: string[] = [];
    const record = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push(JSON.stringify({ level, message, ...fields }));
    const logger: Logger = { debug: record("debug"), info: record("info"), warn: record("warn"), error: record("error") };
    const failing = createRunplane({
      storage,
      keyring: createKeyring({ keys: [k1] }),
      clock: fakeClock(),
      publicUrl: "https://runplane.example",
      host: false,
      logger,
      artifacts: { planLog: () => Promise.reject(new Error("the host's log store is down")) },
    });
    const url = await planUrlOf(host([k1]));
    const capability = capabilityOf(url);
    const [prefix, payload, mac] = capability.split(".") as [string, string, string];
    // The exact spelling, and the encoded ones an attacker sends to see what the log keeps.
    for (const spelling of [capability, `${prefix}%2E${payload}%2E${mac}`, `%72${prefix.slice(1)}.${payload}.${mac}`]) {
      const res = await fetchLog({ runplane: failing }, withCapability(url, spelling), "limit=10&offset=0");
      expect([404, 500]).toContain(res.status);
    }
    expect(lines.some((l) => l.includes("request failed") && l.includes("/api/v2/logs/[redacted]"))).toBe(true);
    for (const line of lines) expect(line).not.toContain(mac);
    for (const line of lines) expect(line).not.toContain(payload);
  });
});
