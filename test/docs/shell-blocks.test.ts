import { execSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { COMMAND_HELP } from "../../src/cli/help.js";
import { ROUTE_PERMISSIONS } from "../../src/http/route-permissions.js";

// The shell blocks of README.md and docs/ checked against the project: every npm script they run
// exists, every package they install is one runplane names, every runplane command and flag is in
// its help, every file they run is there, every variable they set is read somewhere, and every URL
// they curl is a route. (The ts blocks are type-checked by test/readme.test.ts.)

const root = fileURLToPath(new URL("../..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
const markdown = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? markdown(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : []));
const PAGES = ["README.md", ...markdown("docs")];

/** Each command of the page's sh blocks: comments dropped, `a && b` split. */
function commandsOf(page: string): string[] {
  const text = readFileSync(join(root, page), "utf8");
  return [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].flatMap((m) =>
    m[1]!
      .split("\n")
      .map((line) => line.replace(/\s+#\s.*$/, "").trim())
      .filter((line) => line !== "" && !line.startsWith("#"))
      .flatMap((line) => line.split(/\s+&&\s+/)),
  );
}

const SOURCES = execSync("git ls-files src examples bench adapters scripts", { cwd: root, encoding: "utf8" }).split("\n").filter((f) => f.endsWith(".ts") || f.endsWith(".mjs"));
const sourceText = SOURCES.map((f) => readFileSync(join(root, f), "utf8")).join("\n");
const KNOWN_PACKAGES = new Set(["runplane", ...["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"].flatMap((k) => Object.keys(pkg[k] ?? {}))]);
const routePattern = (key: string): RegExp => new RegExp(`^${key.split(" ")[1]!.replace(/:[a-z_]+/g, "[^/]+")}/?$`);
const ROUTES = Object.keys(ROUTE_PERMISSIONS).map(routePattern);

/** What is wrong with one command, or null. */
function problem(command: string): string | null {
  const words = command.split(/\s+/);
  while (/^[A-Z_]+=/.test(words[0] ?? "")) {
    const name = words.shift()!.split("=")[0]!;
    if (!sourceText.includes(name)) return `sets ${name}, which nothing reads`;
  }
  const [tool, ...args] = words;
  if (tool === "npm") return npmProblem(args);
  if (tool === "npx" && args[0] === "runplane") return runplaneProblem(args.slice(1));
  if (tool === "runplane") return runplaneProblem(args);
  if (tool === "npx" && args[0] === "tsx") return existsSync(join(root, args[1]!)) ? flagsIn(readFileSync(join(root, args[1]!), "utf8"), args.slice(2)) : `runs ${args[1]}, which is not there`;
  if (tool === "curl") return curlProblem(args);
  return `an unchecked command: ${tool}`;
}

function npmProblem(args: string[]): string | null {
  const [verb, ...rest] = args;
  if (verb === "start" || verb === "test") return pkg.scripts?.[verb] ? null : `npm ${verb}: no such script`;
  // `npm run runplane -- <command>` is the runplane command from source, as a clone runs it.
  if (verb === "run" && rest[0] === "runplane" && rest[1] === "--" && pkg.scripts?.runplane) return runplaneProblem(rest.slice(2));
  if (verb === "run") return pkg.scripts?.[rest[0]!] ? null : `npm run ${rest[0]}: no such script`;
  if (verb === "init" || verb === "pkg") return null;
  if (verb === "install" || verb === "i") {
    const unknown = rest.filter((a) => !a.startsWith("-") && !KNOWN_PACKAGES.has(a.replace(/(.)@[^/]*$/, "$1")));
    return unknown.length === 0 ? null : `installs ${unknown.join(", ")}, which runplane names nowhere in package.json`;
  }
  return `npm ${verb}: unchecked`;
}

function runplaneProblem(args: string[]): string | null {
  const name = args[0] === "token" ? `token ${args[1]}` : args[0]!;
  const help = COMMAND_HELP[name];
  return help ? flagsIn(help, args.slice(1)) : `runplane ${name}: no such command`;
}

/** Every `--flag` of `args` is named in `text`. */
function flagsIn(text: string, args: string[]): string | null {
  const missing = args.filter((a) => a.startsWith("--") && a !== "--" && !text.includes(a.split("=")[0]!));
  return missing.length === 0 ? null : `flags ${missing.join(", ")} are not in its help`;
}

function curlProblem(args: string[]): string | null {
  const url = args.find((a) => /^https?:\/\//.test(a));
  if (!url) return "curls no URL";
  const path = new URL(url.replace(/[A-Z_]+_ID/g, "x")).pathname;
  if (path === "/demo/runs") return null;
  if (!path.startsWith("/api/v2/")) return `curls ${path}, outside the API`;
  return ROUTES.some((r) => r.test(path.slice("/api/v2".length))) ? null : `curls ${path}, which no route serves`;
}

describe("shell blocks in README.md and docs/", () => {
  const all = PAGES.flatMap((page) => commandsOf(page).map((command) => [page, command] as const));

  it("has commands to check", () => {
    expect(all.length).toBeGreaterThan(20);
  });

  it.each(all)("%s: %s", (_, command) => {
    expect(problem(command)).toBeNull();
  });

  it("catches what it is for", () => {
    expect(problem("npm run no-such-script")).toMatch(/no such script/);
    expect(problem("npx runplane serve --no-such-flag")).toMatch(/not in its help/);
    expect(problem("npm run runplane -- agent --no-such-flag")).toMatch(/not in its help/);
    expect(problem("runplane nonsense")).toMatch(/no such command/);
    expect(problem("npm install left-pad")).toMatch(/left-pad/);
    expect(problem("NO_SUCH_VARIABLE_ANYWHERE=1 npm start")).toMatch(/nothing reads/);
    expect(problem("curl -s http://127.0.0.1:8080/api/v2/nowhere/at/all")).toMatch(/no route/);
    expect(problem("npx tsx examples/missing.ts")).toMatch(/not there/);
  });
});
