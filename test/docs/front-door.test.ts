import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// What a newcomer looks for first, said on the two front doors (the repository's README and the
// package's, docs/npm-readme.md): the demo, an embedding's first token, and whose rate limit is on.

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), "utf8");
const oneLine = (text: string) => text.replace(/\s+/g, " ");

describe("the front doors", () => {
  it("README points at the demo route and its guide", () => {
    const readme = read("README.md");
    expect(readme).toContain("`POST /demo/runs`");
    expect(readme).toContain("(docs/guides/reference-server.md#the-demo-run)");
  });

  it("README and the npm README say how an embedding gets its first API token", () => {
    for (const file of ["README.md", "docs/npm-readme.md"]) {
      expect(oneLine(read(file)), file).toMatch(/first API token[^.]*`(runplane\.)?directory\.createApiToken/);
    }
  });

  it("say rate limits are off in the library but 30 a second per token on the reference server", () => {
    for (const file of ["README.md", "docs/npm-readme.md"]) {
      const text = oneLine(read(file));
      expect(text, file).not.toMatch(/rate limits[^.]*\boff by default\b/i);
      expect(text, file).toMatch(/library's default is off/);
      expect(text, file).toMatch(/reference server[^.]*30 requests a second per token[^.]*`RATE_LIMIT=off`/);
    }
  });

  it("README's first commands say what takes time: better-sqlite3 compiles, and the test run's length", () => {
    const readme = read("README.md");
    const line = (start: string) => readme.split("\n").find((l) => l.startsWith(start)) ?? "";
    const install = line("npm install && npm start");
    expect(install).toMatch(/\d+-\d+ min/);
    expect(install).toMatch(/better-sqlite3 compiles/);
    expect(install).toMatch(/no warnings/);
    expect(line("npm test")).toMatch(/\d+-\d+ min/);
  });

  // In a clone `npx runplane` answers "runplane: not found": npm resolves the name to the project
  // itself, whose command is linked only where the package is installed. The README's shell blocks
  // are run in a clone, so they use the script that runs the command from source.
  it("README's shell blocks run the runplane command as a clone can: npm run runplane --, never npx runplane", () => {
    const readme = read("README.md");
    const shell = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!).join("\n");
    expect(shell).not.toMatch(/npx runplane\b/);
    expect(shell).toMatch(/npm run runplane -- agent /);
    expect(oneLine(readme)).toMatch(/in this clone[^.]*`npm run runplane -- /);
    const version = execFileSync("npm", ["run", "--silent", "runplane", "--", "--version"], { cwd: fileURLToPath(new URL("../..", import.meta.url)), encoding: "utf8", timeout: 60_000 });
    expect(version.trim()).toBe((JSON.parse(read("package.json")) as { version: string }).version);
  }, 70_000);

  // The page a refused verification sends people to names the causes as the 422 does (D15):
  // the key first, the other dialect's header second, and the check that tells them apart.
  it("troubleshooting names a differing HMAC key before the dialect, and runplane check-integration", () => {
    const page = oneLine(read("docs/troubleshooting.md"));
    const section = /\*\*Signature mismatches[^]*?(?=- \*\*|$)/.exec(page)?.[0] ?? "";
    const key = section.indexOf("The HMAC key differs");
    const dialect = section.indexOf("reads only the other dialect's header");
    expect(key).toBeGreaterThan(-1);
    expect(dialect).toBeGreaterThan(key);
    expect(section).toMatch(/runplane check-integration <url> --hmac-key <key> --dialect default/);
  });

  // What a snippet listens on is what a newcomer exposes: the loopback address unless the snippet
  // says why not; and the reference server's /metrics says who can read it.
  it("every listen in the READMEs' and guides' code binds 127.0.0.1, and /metrics' exposure is documented", () => {
    const pages = ["README.md", "docs/npm-readme.md", "docs/guides/embedding.md", "docs/guides/observability.md"];
    for (const page of pages) {
      const code = [...read(page).matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!).join("\n");
      const listens = code.split("\n").filter((line) => /\.listen\(|\bserve\(\{/.test(line));
      for (const line of listens) expect(line, page).toMatch(/127\.0\.0\.1|"127\.0\.0\.1"|hostname: "127\.0\.0\.1"|every interface because/);
    }
    const observability = oneLine(read("docs/guides/observability.md"));
    expect(observability).toMatch(/`GET \/metrics`[^*]*\*\*It answers without a token by default\*\*/);
    expect(observability).toMatch(/`METRICS_TOKEN`/);
  });

  // The npm README's SQLite snippet imports better-sqlite3 with strict TypeScript: without its types
  // it does not compile, so the install lines that set the snippet up name them.
  it("the npm README's install lines name @types/better-sqlite3 beside better-sqlite3, as the README's new-project note does", () => {
    const npm = read("docs/npm-readme.md");
    expect(npm).toMatch(/^```ts\n[^`]*from "better-sqlite3"/m);
    const installs = npm.split("\n").filter((l) => l.startsWith("npm install"));
    expect(installs.join("\n")).toMatch(/@types\/better-sqlite3/);
    expect(oneLine(read("README.md"))).toMatch(/`better-sqlite3` \(and `@types\/better-sqlite3`/);
  });
});
