import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

// Issue 24.5: the README's Embedding section is one whole program that a newcomer can copy and run:
// it creates a dispatcher and its own first organization, team and token, so its run is delivered.
const ROOT = new URL("../../", import.meta.url).pathname;
const PROGRAM = "examples/embedding/main.ts";
const children: ReturnType<typeof spawn>[] = [];
afterAll(() => children.forEach((c) => c.exitCode === null && c.kill("SIGKILL")));

/** Runs the program as the README says (`npx tsx examples/embedding/main.ts`) to its exit. */
function runProgram(): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  for (const name of ["PORT", "RUNPLANE_KEY"]) delete env[name];
  // A program that never sends its run would wait forever: end it, and the exit code says so.
  const child = spawn(join(ROOT, "node_modules/.bin/tsx"), [PROGRAM], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], timeout: 30_000 });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}

describe("the README's embedding program", () => {
  it("is the README's Embedding block, character for character", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("\n## Embedding\n"));
    const block = /^```ts\n([\s\S]*?)^```$/m.exec(section)?.[1];
    expect(block).toBe(readFileSync(join(ROOT, PROGRAM), "utf8"));
  });

  it("delivers its run task request, sees the stage pass, and exits cleanly", { timeout: 60_000 }, async () => {
    const { code, signal, stdout, stderr } = await runProgram();
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
    expect(stdout.split("\n")).toEqual([expect.stringMatching(/^delivered: post_plan request for run-\S+$/), "stage post_plan: passed", ""]);
  });
});
