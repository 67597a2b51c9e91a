import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

// docs/guides/observability.md's whole setup, run as written (its runplane imports pointed at the
// source): the versions its install line names are the ones this repository installs without a
// peer warning (test/install/quiet-install.test.ts), and the program serves runplane's metrics.

const root = fileURLToPath(new URL("../..", import.meta.url));
const guide = readFileSync(join(root, "docs/guides/observability.md"), "utf8");
const block = [...guide.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!).find((code) => code.includes("PrometheusExporter"));
const install = /^npm install runplane (.+)$/m.exec(guide)?.[1]?.split(/\s+/) ?? [];
// Under node_modules, so the program's own imports resolve from the repository's node_modules.
const dir = join(root, "node_modules", `.rp-observability-guide-${process.pid}`);
let child: ChildProcess | undefined;
afterAll(() => {
  child?.kill();
  rmSync(dir, { recursive: true, force: true });
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

describe("the observability guide's setup (D50)", () => {
  it("installs @opentelemetry versions that are the ones this repository resolves together", () => {
    expect(install.length).toBe(3);
    for (const spec of install) {
      const at = spec.lastIndexOf("@");
      const [name, range] = [spec.slice(0, at), spec.slice(at + 1)];
      const installed = (JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
      expect(`${installed}.`.startsWith(`${range}.`), `${spec} against ${installed}`).toBe(true);
    }
  });

  it("runs as written on Node 20 and serves runplane's metrics on 127.0.0.1", async () => {
    expect(block).toBeDefined();
    mkdirSync(dir, { recursive: true });
    const code = block!
      .replace(/from "runplane"/g, `from ${JSON.stringify(join(root, "src/index.ts"))}`)
      .replace(/from "runplane\/adapters\/memory"/g, `from ${JSON.stringify(join(root, "adapters/memory/index.ts"))}`)
      .replace(/from "runplane\/node"/g, `from ${JSON.stringify(join(root, "src/node.ts"))}`);
    writeFileSync(join(dir, "main.ts"), code);
    const [port, metricsPort] = [await freePort(), await freePort()];
    child = spawn(process.execPath, ["--import", "tsx", join(dir, "main.ts")], {
      cwd: dir,
      env: { ...process.env, PORT: String(port), METRICS_PORT: String(metricsPort) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line in 20 s; stderr: ${stderr}`)), 20_000);
      child!.stdout!.on("data", (d: Buffer) => {
        clearTimeout(timer);
        resolve(d.toString());
      });
      child!.on("exit", (status) => reject(new Error(`exited ${status}: ${stderr}`)));
    });
    expect(line).toContain(`http://127.0.0.1:${metricsPort}/metrics`);
    expect((await fetch(`http://127.0.0.1:${port}/api/v2/ping`)).status).toBe(204);
    const scrape = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(scrape).toMatch(/^runplane_http_requests_total\{route="GET \/ping",status="204",otel_scope_name="runplane"\} 1$/m);
    expect(scrape).toMatch(/^runplane_outbox_due\{otel_scope_name="runplane"\} 0$/m);
  }, 40_000);
});
