import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMAND_HELP } from "../src/cli/help.js";
import { packAsPublished, installInto, ROOT, run, runplaneCli, serveFrom, userEnv, type Served } from "./helpers/packed.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "./helpers/postgres.js";

/**
 * The packed tarball in fresh projects, the library as a user imports it and
 * the runplane command as a user runs it. `bare` has runplane and its production dependencies
 * only (no better-sqlite3, pg, vitest or any dev dependency); `app` adds what the npm README's
 * snippets install beside it.
 */
const fixtures = join(ROOT, "test/fixtures/consumer");
const tsc = (cwd: string, project: string) => run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", project], cwd);
const tsBlocks = (markdown: string) => [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);

let scratch = "";
let tarball = "";
let packedFrom = "";
let bare = "";
let app = "";

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "runplane-consumer-"));
  const packed = packAsPublished(scratch);
  packedFrom = packed.packedFrom;
  tarball = packed.tarball;
  bare = join(scratch, "bare");
  installInto(bare, packed.tarball);
  cpSync(fixtures, bare, { recursive: true });
  app = join(scratch, "app");
  installInto(app, packed.tarball, ["@types/node", "better-sqlite3", "@types/better-sqlite3", "hono", "@hono/node-server", "express", "@types/express"]);
  cpSync(fixtures, app, { recursive: true });
  const common = { target: "ES2022", strict: true, skipLibCheck: false, types: ["node"], lib: ["ES2023", "DOM"] };
  writeFileSync(join(app, "tsconfig.nodenext.json"), JSON.stringify({ compilerOptions: { ...common, module: "NodeNext", moduleResolution: "NodeNext", outDir: "out" }, files: ["consumer.ts"] }));
  writeFileSync(join(app, "tsconfig.bundler.json"), JSON.stringify({ compilerOptions: { ...common, module: "ESNext", moduleResolution: "Bundler", noEmit: true, skipLibCheck: true }, files: ["consumer.ts"] }));
  writeFileSync(join(app, "tsconfig.node10.json"), JSON.stringify({ compilerOptions: { ...common, module: "CommonJS", moduleResolution: "node10", esModuleInterop: true, noEmit: true }, files: ["consumer-node10.ts"] }));
  // npm pack builds with tsup: about 150 s, and past 180 s, on 2 cores shared with other work.
}, 600_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("the packed tarball's contents", () => {
  it("contains the build, LICENSE and README and nothing from src or test", () => {
    const installed = join(app, "node_modules/runplane");
    expect(readFileSync(join(installed, "LICENSE"), "utf8")).toMatch(/^MIT License/);
    expect(readFileSync(join(installed, "README.md"), "utf8")).toContain("createRunplane");
    expect(existsSync(join(installed, "src/index.ts"))).toBe(false);
  });

  it("holds every file package.json points at, built by npm pack itself from a clean checkout", () => {
    const listed = run("tar", ["tzf", tarball], scratch).split("\n").map((f) => f.replace(/^package\//, ""));
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { exports: Record<string, Record<string, string>>; bin: Record<string, string> };
    const targets = [...Object.values(manifest.exports).flatMap((e) => Object.values(e)), ...Object.values(manifest.bin)];
    for (const target of targets) expect(listed, target).toContain(target.replace(/^\.\//, ""));
  });

  // decision D51: what embedders use, maps for stack traces without the sources in them.
  it("ships source maps without sourcesContent, under 3.5 MB unpacked, and nothing from src or test", () => {
    const installed = join(app, "node_modules/runplane");
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
    const all = files(installed);
    const maps = all.filter((f) => f.endsWith(".map"));
    expect(maps.length).toBeGreaterThan(0);
    for (const map of maps) expect((JSON.parse(readFileSync(map, "utf8")) as { sourcesContent?: unknown }).sourcesContent, map).toBeUndefined();
    const bytes = all.reduce((n, f) => n + readFileSync(f).length, 0);
    // 3.0 MB after the turn that added the audit trail, run lists and agent records; sourcesContent would add about 3 MB more.
    expect(bytes).toBeLessThan(3_500_000);
    expect(all.filter((f) => /\/(src|test)\//.test(f.slice(installed.length)))).toEqual([]);
  });

  it("names no repository, homepage or issue tracker until the project has a public address", () => {
    const manifest = JSON.parse(readFileSync(join(app, "node_modules/runplane/package.json"), "utf8")) as Record<string, unknown>;
    expect([manifest.repository, manifest.homepage, manifest.bugs]).toEqual([undefined, undefined, undefined]);
  });

  it("ships the library user's README, and packing puts the repository's README back", () => {
    const shipped = readFileSync(join(app, "node_modules/runplane/README.md"), "utf8");
    expect(shipped).toBe(readFileSync(join(ROOT, "docs/npm-readme.md"), "utf8"));
    expect(shipped).toContain("npm install runplane");
    expect(shipped).not.toContain("npm start");
    expect(readFileSync(join(packedFrom, "README.md"), "utf8")).toBe(readFileSync(join(ROOT, "README.md"), "utf8"));
    expect(existsSync(join(packedFrom, ".readme-repo.md"))).toBe(false);
  });

  it("declares createRunplane's result by name rather than as an expanded shape", () => {
    const dts = readFileSync(join(app, "node_modules/runplane/dist/index.d.ts"), "utf8");
    expect(dts).toMatch(/declare function createRunplane\(options: RunplaneOptions\): Runplane;/);
    expect(dts).toMatch(/interface Runplane \{[^}]*variables: VariableService;/);
  });
});

describe("with production dependencies only", () => {
  it("imports every entry but the vitest one, from ESM, with no optional peer installed", () => {
    const entries = Object.keys(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).exports as Record<string, unknown>)
      .filter((subpath) => subpath !== "./testing/vitest")
      .map((subpath) => `runplane${subpath.slice(1)}`);
    const script = `for (const e of ${JSON.stringify(entries)}) await import(e); console.log("ok");`;
    expect(run(process.execPath, ["--input-type=module", "-e", script], bare).trim()).toBe("ok");
  });

  it.each([
    ["ESM", "simulate.mjs"],
    ["CommonJS", "simulate.cjs"],
  ])("runs simulateRunTask from runplane/testing without vitest (%s)", (_, file) => {
    const out = JSON.parse(run(process.execPath, [file], bare));
    // Nothing listens on port 1: the simulator runs and reports the refused connection as a failed check.
    expect(out).toEqual({ ok: false, failed: true, formatted: true });
  });

  it("asks for vitest only from runplane/testing/vitest, by name", () => {
    let message = "";
    try {
      run(process.execPath, ["--input-type=module", "-e", 'await import("runplane/testing/vitest")'], bare);
    } catch (error) {
      message = String((error as { stderr?: string }).stderr);
    }
    expect(message).toContain("Cannot find package 'vitest'");
  });
});

describe("a library user's project", () => {
  it("type-checks and runs a consumer under NodeNext resolution", () => {
    tsc(app, "tsconfig.nodenext.json");
    const out = JSON.parse(run(process.execPath, ["out/consumer.js"], app));
    expect(out).toEqual({ ping: 204, organization: "acme", mounts: ["function", "function"] });
  }, 60_000);

  // The declarations themselves were checked above (skipLibCheck false); here only resolution differs.
  it("type-checks the same consumer under Bundler resolution", () => {
    expect(() => tsc(app, "tsconfig.bundler.json")).not.toThrow();
  }, 60_000);

  it("type-checks a consumer under the older node10 resolution (main, types and typesVersions)", () => {
    expect(() => tsc(app, "tsconfig.node10.json")).not.toThrow();
  }, 60_000);

  it("loads with require() from a CommonJS file", () => {
    const out = JSON.parse(run(process.execPath, ["consumer.cjs"], app));
    expect(out).toEqual({ ping: 204, middleware: "function" });
  });

  it("type-checks and runs the npm README's Hono and Express snippets", () => {
    const blocks = tsBlocks(readFileSync(join(app, "node_modules/runplane/README.md"), "utf8"));
    const hono = blocks.find((b) => b.includes('from "hono"'));
    const express = blocks.find((b) => b.includes('from "runplane/express"'));
    expect(hono && express).toBeTruthy();
    // Each snippet, then a few lines that ask its mount for /ping and end the process.
    const ping = (response: string) => `\nconst res = await ${response};\nconsole.log(res.status);\nprocess.exit(0);\n`;
    mkdirSync(join(app, "snippets"), { recursive: true });
    writeFileSync(join(app, "snippets/hono.ts"), `${hono}${ping("app.fetch(new Request(`http://localhost${runplane.basePath}/ping`))")}`);
    // The snippet binds 127.0.0.1, which Node resolves before listening: its address comes a tick later.
    const listening = `\nif (!server.listening) await new Promise((resolve) => server.once("listening", resolve));`;
    writeFileSync(join(app, "snippets/express.ts"), `${express}${listening}${ping("fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}${runplane.basePath}/ping`)")}`);
    const options = { target: "ES2022", strict: true, module: "NodeNext", moduleResolution: "NodeNext", types: ["node"], lib: ["ES2023", "DOM"], outDir: "snippets/out" };
    writeFileSync(join(app, "tsconfig.snippets.json"), JSON.stringify({ compilerOptions: options, files: ["snippets/hono.ts", "snippets/express.ts"] }));
    tsc(app, "tsconfig.snippets.json");
    const env = userEnv({ RUNPLANE_KEY: run(join(app, "node_modules/.bin/runplane"), ["keygen"], app).trim(), PORT: "0" });
    expect(run(process.execPath, ["snippets/out/hono.js"], app, env).trim()).toBe("204");
    expect(run(process.execPath, ["snippets/out/express.js"], app, env).trim()).toBe("204");
  }, 90_000);
});

/**
 * `@opentelemetry/api` is a peer, so the embedder's copy is the one runplane reports to.
 * Installed from the registry as users install it, beside the SDK versions embedders use: sdk-metrics
 * 2.x pins the API to 1.9.x and 3.x to 1.10.x, and with the API as runplane's own dependency the
 * first got two copies (and no runplane metrics) and the second an ERESOLVE.
 */
describe("an embedder's own OpenTelemetry SDK", () => {
  const consumer = `
    import { metrics } from "@opentelemetry/api";
    import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
    class Reader extends MetricReader { async onForceFlush() {} async onShutdown() {} }
    const reader = new Reader();
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    const { createRunplane } = await import("runplane");
    const { createMemoryStorage } = await import("runplane/adapters/memory");
    const key = Buffer.alloc(32, 7).toString("base64");
    const runplane = createRunplane({ storage: createMemoryStorage(), keyring: { keys: [{ id: "k1", key }] }, publicUrl: "https://infra.example.com" });
    await runplane.handler(new Request("http://localhost/api/v2/workspaces/ws-none/vars"));
    const { resourceMetrics } = await reader.collect();
    console.log(JSON.stringify(resourceMetrics.scopeMetrics.flatMap((s) => s.metrics.map((m) => m.descriptor.name))));
  `;
  it.each([
    ["sdk-metrics 2.x with API 1.9", ["@opentelemetry/api@1.9", "@opentelemetry/sdk-metrics@2"]],
    ["sdk-metrics 3.x", ["@opentelemetry/api", "@opentelemetry/sdk-metrics@3"]],
  ])("installs beside %s with one API copy, and the embedder's provider collects runplane's metrics", (_, packages) => {
    const dir = join(scratch, `otel-${packages.length}-${packages[1]!.split("@").at(-1)}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "embedder", private: true, type: "module" }));
    run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball, ...packages], dir, userEnv());
    expect(existsSync(join(dir, "node_modules/runplane/node_modules/@opentelemetry/api")), "a second API copy under runplane").toBe(false);
    writeFileSync(join(dir, "embedder.mjs"), consumer);
    const names = JSON.parse(run(process.execPath, ["embedder.mjs"], dir, userEnv()).trim()) as string[];
    expect(names).toContain("runplane.http.requests");
  }, 180_000);
});

describe("the runplane command from the tarball, production dependencies only", () => {
  it.each(["--help", ...Object.keys(COMMAND_HELP).map((c) => `${c} --help`)])("prints `runplane %s` and exits 0", async (args) => {
    const out = await runplaneCli(bare, args.split(" "));
    expect(out.stderr).toBe("");
    expect(out.stdout).toMatch(/^usage: runplane /);
    expect(out.code).toBe(0);
  });

  it("prints the package's version with --version", async () => {
    const out = await runplaneCli(bare, ["--version"]);
    expect(out.stdout).toBe(`${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version}\n`);
    expect(out.code).toBe(0);
  });

  it("makes a keyring key with keygen", async () => {
    const out = await runplaneCli(bare, ["keygen"]);
    expect(Buffer.from(out.stdout.trim(), "base64")).toHaveLength(32);
    expect(out.code).toBe(0);
  });

  it.each([
    ["serve on SQLite", ["serve", "--port", "0", "--integration-port", "0", "--data-dir", "d1"], "better-sqlite3"],
    ["migrate on PostgreSQL", ["migrate", "--database-url", "postgres://127.0.0.1:1/none"], "pg"],
  ])("says in one line which package to install for %s", async (_, args, name) => {
    const out = await runplaneCli(bare, args);
    expect(out.stderr).toBe(`runplane ${args[0]}: ${args[0] === "serve" ? "serve on the SQLite file (without DATABASE_URL)" : "DATABASE_URL (PostgreSQL)"} needs the package ${name}, which is not installed: npm install ${name}\n`);
    expect(out.code).toBe(1);
    // Nothing is left behind (serve made ./d1 with a keyring before it found the driver missing).
    expect(existsSync(join(bare, "d1"))).toBe(false);
  });

  it("bundles nothing CommonJS and imports only declared packages", () => {
    const dist = join(bare, "node_modules/runplane/dist");
    const manifest = JSON.parse(readFileSync(join(dist, "../package.json"), "utf8")) as { dependencies: object; peerDependencies: object };
    const files = readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js"));
    const declared = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies)]);
    for (const file of files) {
      const code = readFileSync(join(dist, file), "utf8");
      // esbuild's shim for a require() inside an ESM bundle: it throws "Dynamic require of ... is not supported".
      expect(code, file).not.toMatch(/__require\(|Dynamic require of/);
      for (const [, spec] of code.matchAll(/(?:^import[^;]*?from|\bimport\()\s*['"]([^'".][^'"]*)['"]/gm)) {
        const name = spec!.startsWith("@") ? spec!.split("/").slice(0, 2).join("/") : spec!.split("/")[0]!;
        if (!isBuiltin(spec!)) expect(declared.has(name), `${file} imports ${spec}`).toBe(true);
      }
    }
  });
});

describe("the runplane command from the tarball with better-sqlite3", () => {
  it("migrates the SQLite file, then finds it up to date, and doctor checks it", async () => {
    mkdirSync(join(app, "migrated"));
    const first = await runplaneCli(app, ["migrate", "--data-dir", "migrated"]);
    expect(first.stdout).toMatch(/^applied: /m);
    expect(first.code).toBe(0);
    expect((await runplaneCli(app, ["migrate", "--data-dir", "migrated"])).stdout).toBe("schema is up to date: nothing to apply\n");
    const doctor = await runplaneCli(app, ["doctor", "--data-dir", "migrated"]);
    expect(doctor.stdout).toContain("schema up to date");
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
  }, 60_000);

  it("serves a demo run end to end, passes check-integration against its example integration, and stops on SIGTERM", async () => {
    const served = await serveFrom(app, ["--data-dir", "served"]);
    try {
      expect((await demoRun(served)).stages).toStrictEqual({ post_plan: "passed", pre_apply: "passed" });
      const key = readFileSync(join(app, "served/integration-hmac-key"), "utf8").trim();
      const check = await runplaneCli(app, ["check-integration", served.integration, "--hmac-key", key]);
      expect(check.stdout).toContain("integration passes the run task contract");
      expect(check.code).toBe(0);
    } finally {
      expect(await served.stop()).toBe(0);
    }
    expect(served.output()).not.toMatch(/\n\s+at /);
  }, 90_000);
});

describe.runIf(await postgresReachable("shipped package on PostgreSQL"))("the runplane command from the tarball with pg", () => {
  const schema = uniqueSchema("shipped");
  afterAll(async () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL });
    await dropSchema(pool, schema).finally(() => pool.end());
  });

  it("serves a demo run end to end on DATABASE_URL", async () => {
    const withPg = join(scratch, "app-pg");
    installInto(withPg, tarball, ["better-sqlite3", "pg"]);
    const env = userEnv({ DATABASE_URL, DATABASE_SCHEMA: schema });
    const served = await serveFrom(withPg, ["--data-dir", "served"], env);
    try {
      expect(served.output()).toContain(`schema ${schema}`);
      expect((await demoRun(served)).stages).toStrictEqual({ post_plan: "passed", pre_apply: "passed" });
    } finally {
      expect(await served.stop()).toBe(0);
    }
  }, 90_000);
});

async function demoRun(served: Served): Promise<{ stages: Record<string, string> }> {
  const res = await fetch(`${served.origin}/demo/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${served.token}`, "content-type": "application/json" },
    body: JSON.stringify({ message: "from the shipped package" }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { stages: Record<string, string> };
}
