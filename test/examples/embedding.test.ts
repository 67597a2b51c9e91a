import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

// The embedding guide's whole program (docs/guides/embedding.md, linked from the README) is one
// program a newcomer can copy and run: it creates a dispatcher and its own first organization, team
// and token, so its run is delivered.
const ROOT = new URL("../../", import.meta.url).pathname;
const PROGRAM = "examples/embedding/main.ts";
const children: ReturnType<typeof spawn>[] = [];
afterAll(() => children.forEach((c) => c.exitCode === null && c.kill("SIGKILL")));

/** Runs the program as the guide says (`npx tsx examples/embedding/main.ts`) to its exit. */
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

describe("the embedding guide's whole program", () => {
  it("is the first block of docs/guides/embedding.md's \"The whole program\", character for character", () => {
    const guide = readFileSync(join(ROOT, "docs/guides/embedding.md"), "utf8");
    const start = guide.indexOf("\n## The whole program\n");
    expect(start).toBeGreaterThan(-1);
    const section = guide.slice(start);
    const block = /^```ts\n([\s\S]*?)^```$/m.exec(section)?.[1];
    expect(block).toBe(readFileSync(join(ROOT, PROGRAM), "utf8"));
  });

  it("delivers its run task request, sees the stage pass, and exits cleanly", { timeout: 60_000 }, async () => {
    const { code, signal, stdout, stderr } = await runProgram();
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
    expect(stdout.split("\n")).toEqual([expect.stringMatching(/^delivered: post_plan request for run-\S+$/), "stage post_plan: passed", ""]);
  });
});
