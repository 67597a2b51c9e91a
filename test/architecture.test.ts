import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The layers of docs/architecture.md, checked against every import in src/, adapters/ and
// examples/: a module may import only the modules its row names, and each of those sits on a lower
// layer, so no import runs back up. Files within one module may import each other, but never in a
// circle. test/ and bench/ may import anything and are not read.

const root = fileURLToPath(new URL("..", import.meta.url));
const SCANNED = ["src", "adapters", "examples"];

/**
 * Layer and allowed imports of each module: a folder (ending in `/`) or a single file. A file
 * belongs to the longest module that contains it (`src/cli/args.ts` is not `src/cli/`). Imports of
 * packages (`zod`, `node:http`) are not modules and are not checked here. Mirrored, row for row, by
 * the table in docs/architecture.md.
 */
const MODULES: Record<string, { layer: number; imports: readonly string[] }> = {
  // 0: imports nothing of ours.
  "src/schemas/": { layer: 0, imports: [] },
  "src/crypto/": { layer: 0, imports: [] },
  "src/logger.ts": { layer: 0, imports: [] },
  "src/telemetry/": { layer: 0, imports: [] },
  "src/suggest.ts": { layer: 0, imports: [] },
  "src/optional-peer.ts": { layer: 0, imports: [] },
  "src/node.ts": { layer: 0, imports: [] },
  // 1: pure rules and the storage contract.
  "src/domain/": { layer: 1, imports: ["src/schemas/"] },
  "src/storage/": { layer: 1, imports: ["src/schemas/"] },
  "src/express.ts": { layer: 1, imports: ["src/node.ts"] },
  "src/cli/args.ts": { layer: 1, imports: ["src/suggest.ts"] },
  // 2: the error table, the integration kit, the adapters without a driver.
  "src/errors.ts": { layer: 2, imports: ["src/storage/"] },
  "src/integration/": { layer: 2, imports: ["src/domain/", "src/schemas/"] },
  "adapters/memory/": { layer: 2, imports: ["src/schemas/", "src/storage/"] },
  "adapters/sql/": { layer: 2, imports: ["src/schemas/", "src/storage/"] },
  // 3: orchestration, and the adapters with a driver.
  "src/services/": {
    layer: 3,
    imports: ["src/crypto/", "src/domain/", "src/errors.ts", "src/logger.ts", "src/schemas/", "src/storage/", "src/telemetry/"],
  },
  "adapters/sqlite/": { layer: 3, imports: ["adapters/sql/", "src/optional-peer.ts", "src/schemas/", "src/storage/"] },
  "adapters/postgres/": { layer: 3, imports: ["adapters/sql/", "src/optional-peer.ts", "src/schemas/", "src/storage/"] },
  "examples/integration/": { layer: 3, imports: ["src/integration/"] },
  // 4: the two ways in and out: HTTP routes and the delivery outbox.
  "src/http/": {
    layer: 4,
    imports: ["src/crypto/", "src/domain/", "src/errors.ts", "src/logger.ts", "src/schemas/", "src/services/", "src/storage/", "src/telemetry/"],
  },
  "src/delivery/": {
    layer: 4,
    imports: ["src/domain/", "src/errors.ts", "src/logger.ts", "src/schemas/", "src/services/", "src/storage/", "src/telemetry/"],
  },
  // 5: what is built over routes and services.
  "src/openapi/": { layer: 5, imports: ["src/errors.ts", "src/http/", "src/schemas/", "src/services/"] },
  "src/options.ts": { layer: 5, imports: ["src/crypto/", "src/delivery/", "src/schemas/", "src/services/", "src/suggest.ts"] },
  "src/runplane-options.ts": {
    layer: 5,
    imports: ["src/crypto/", "src/delivery/", "src/http/", "src/logger.ts", "src/schemas/", "src/services/", "src/storage/"],
  },
  "src/results-page/": {
    layer: 5,
    imports: ["src/delivery/", "src/domain/", "src/errors.ts", "src/http/", "src/logger.ts", "src/schemas/", "src/services/", "src/storage/"],
  },
  // decision D34: `runplane/agent`, the agent's side; no storage, no services.
  "src/agent/": { layer: 5, imports: ["src/delivery/", "src/schemas/"] },
  // 6: the instance's type.
  "src/runplane.ts": { layer: 6, imports: ["src/delivery/", "src/http/", "src/openapi/", "src/services/"] },
  // 7: the public entry point.
  "src/index.ts": {
    layer: 7,
    imports: [
      "src/crypto/",
      "src/delivery/",
      "src/domain/",
      "src/errors.ts",
      "src/http/",
      "src/logger.ts",
      "src/openapi/",
      "src/options.ts",
      "src/results-page/",
      "src/runplane-options.ts",
      "src/runplane.ts",
      "src/schemas/",
      "src/services/",
      "src/storage/",
      "src/telemetry/",
    ],
  },
  // 8: users of the public entry point: the test kit and the reference server.
  "src/testing/": {
    layer: 8,
    imports: [
      "src/crypto/",
      "src/delivery/",
      "src/domain/",
      "src/http/",
      "src/index.ts",
      "src/integration/",
      "src/logger.ts",
      "src/schemas/",
      "src/services/",
      "src/storage/",
    ],
  },
  "examples/server/": {
    layer: 8,
    imports: [
      "adapters/postgres/",
      "adapters/sqlite/",
      "examples/integration/",
      "src/cli/args.ts",
      "src/crypto/",
      "src/delivery/",
      "src/domain/",
      "src/http/",
      "src/index.ts",
      "src/optional-peer.ts",
      "src/schemas/",
      "src/services/",
      "src/storage/",
    ],
  },
  "examples/test-support.ts": { layer: 8, imports: ["adapters/memory/", "src/index.ts"] },
  "examples/embedding/": { layer: 8, imports: ["adapters/memory/", "src/index.ts", "src/integration/", "src/node.ts"] },
  // 9: the command line, and programs over the reference server or the public entry point.
  "src/cli/": {
    layer: 9,
    imports: [
      "adapters/postgres/",
      "adapters/sqlite/",
      "examples/server/",
      "src/agent/",
      "src/cli/args.ts",
      "src/crypto/",
      "src/domain/",
      "src/index.ts",
      "src/optional-peer.ts",
      "src/schemas/",
      "src/services/",
      "src/storage/",
      "src/testing/",
    ],
  },
  "examples/cluster/": { layer: 9, imports: ["examples/server/"] },
  "examples/express/": { layer: 9, imports: ["adapters/memory/", "examples/test-support.ts", "src/express.ts", "src/index.ts"] },
  "examples/hono/": { layer: 9, imports: ["adapters/memory/", "examples/test-support.ts", "src/index.ts"] },
};

const posix = (path: string): string => path.split(sep).join("/");

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path);
    return /\.(c|m)?tsx?$/.test(entry.name) && !/\.d\.(c|m)?ts$/.test(entry.name) ? [path] : [];
  });
}

/** The module a repository file belongs to: the longest one containing it; undefined for none. */
function moduleOf(file: string): string | undefined {
  let best: string | undefined;
  for (const name of Object.keys(MODULES)) {
    const contains = name.endsWith("/") ? file.startsWith(name) : file === name;
    if (contains && (best === undefined || name.length > best.length)) best = name;
  }
  return best;
}

// The compiler's own resolution with the repository's options, so `.js` specifiers find their
// `.ts` files and `runplane/...` self-imports (tsconfig `paths`) find theirs.
const config = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile);
const { options } = ts.parseJsonConfigFileContent({ compilerOptions: config.config.compilerOptions }, ts.sys, root);
const host: ts.ModuleResolutionHost = { fileExists: ts.sys.fileExists, readFile: ts.sys.readFile };
const cache = ts.createModuleResolutionCache(root, (name) => name, options);

interface Import {
  from: string;
  /** The repository file it names, or null for a package. */
  to: string | null;
  specifier: string;
  line: number;
}

/** Every static `import`/`export ... from`, `import type` and literal `import(...)` of a file. */
function importsOf(file: string): Import[] {
  const text = readFileSync(join(root, file), "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  return ts.preProcessFile(text, true, true).importedFiles.map(({ fileName: specifier, pos }) => {
    const line = source.getLineAndCharacterOfPosition(pos).line + 1;
    const { resolvedModule } = ts.resolveModuleName(specifier, join(root, file), options, host, cache, undefined, ts.ModuleKind.ESNext);
    if (!resolvedModule) {
      if (specifier.startsWith(".")) throw new Error(`${file}:${line}: ${specifier} resolves to no file`);
      return { from: file, to: null, specifier, line };
    }
    const target = posix(relative(root, resolvedModule.resolvedFileName));
    const outside = resolvedModule.isExternalLibraryImport || target.startsWith("../") || target.includes("node_modules/");
    return { from: file, to: outside ? null : target, specifier, line };
  });
}

const files = SCANNED.flatMap(sourceFiles).sort();
const imports = files.flatMap(importsOf);
const internal = imports.filter((i): i is Import & { to: string } => i.to !== null);

/** Strongly connected components of more than one file (or a file importing itself), each sorted. */
function circles(edges: readonly { from: string; to: string }[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) next.set(from, (next.get(from) ?? new Set()).add(to));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  // Tarjan's algorithm, recursive: the import graph is a few hundred files deep at most.
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || next.get(v)?.has(v)) found.push(component.sort());
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

const ARCHITECTURE = "docs/architecture.md";
const architecture = (): string => readFileSync(join(root, ARCHITECTURE), "utf8");

/** The rows of the layer table in docs/architecture.md (its "The layers" section), in the test's own shape. */
function documentedModules(): Record<string, { layer: number; imports: string[] }> {
  const section = /^## The layers\n([\s\S]*?)(?=^## )/m.exec(architecture())?.[1] ?? "";
  const rows: Record<string, { layer: number; imports: string[] }> = {};
  for (const m of section.matchAll(/^\| *(\d+) *\| *`([^`]+)` *\|([^|\n]*)\|/gm)) {
    rows[m[2]!] = { layer: Number(m[1]), imports: [...m[3]!.matchAll(/`([^`]+)`/g)].map((n) => n[1]!).sort() };
  }
  return rows;
}

describe("architecture", () => {
  it("reads the imports of every source file in src/, adapters/ and examples/", () => {
    expect(files.length).toBeGreaterThan(300);
    expect(internal.length).toBeGreaterThan(1000);
    // The resolution is the compiler's: a relative `.js` specifier lands on its `.ts` file.
    expect(internal.some((i) => i.from === "src/index.ts" && i.to === "src/errors.ts")).toBe(true);
  });

  it("places every source file in a module of the layer table", () => {
    expect(files.filter((file) => moduleOf(file) === undefined), "add the new folder or file to MODULES and docs/architecture.md").toEqual([]);
  });

  it("allows each module only imports of modules on lower layers", () => {
    const upward = Object.entries(MODULES).flatMap(([name, { layer, imports: allowed }]) =>
      allowed.filter((to) => !(to in MODULES) || MODULES[to]!.layer >= layer).map((to) => `${name} (layer ${layer}) -> ${to} (layer ${MODULES[to]?.layer ?? "none"})`),
    );
    expect(upward).toEqual([]);
  });

  it("has no import that the layer table does not allow", () => {
    const against = internal.flatMap(({ from, to, specifier, line }) => {
      const a = moduleOf(from);
      const b = moduleOf(to);
      if (a === undefined || b === undefined || a === b || MODULES[a]!.imports.includes(b)) return [];
      return [`${from}:${line} imports ${specifier}: ${a} (layer ${MODULES[a]!.layer}) may not import ${b} (layer ${MODULES[b]!.layer})`];
    });
    expect(against).toEqual([]);
  });

  it("has no import circle between files", () => {
    const found = circles(internal).map((component) => component.join(" <-> "));
    expect(found, "import circles: break each by moving what both sides need below them").toEqual([]);
  });

  it("docs/architecture.md shows the layer table as this test has it", () => {
    const sorted = Object.fromEntries(Object.entries(MODULES).map(([name, { layer, imports: allowed }]) => [name, { layer, imports: [...allowed].sort() }]));
    expect(documentedModules()).toEqual(sorted);
  });

  it("docs/architecture.md names only files and folders that exist", () => {
    // Code spans that look like repository paths: the page's map of where things happen.
    const named = [...architecture().matchAll(/`((?:src|adapters|examples|test|docs)\/[\w./<>*-]*)`/g)].map((m) => m[1]!);
    const concrete = named.filter((path) => !/[<>*]/.test(path));
    expect(concrete.length).toBeGreaterThan(40);
    expect([...new Set(concrete.filter((path) => !existsSync(join(root, path))))]).toEqual([]);
  });
});

describe("circle detection", () => {
  it("finds a circle through three files and a file importing itself, and no circle in a chain", () => {
    const edges = [
      { from: "a", to: "b" },
      { from: "b", to: "c" },
      { from: "c", to: "a" },
      { from: "c", to: "d" },
      { from: "e", to: "e" },
      { from: "f", to: "g" },
    ];
    expect(circles(edges)).toEqual([["a", "b", "c"], ["e"]]);
  });
});
