import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importOptional, MissingPeerError } from "../src/optional-peer.js";

const ABSENT = "definitely-not-installed-pkg-xyz";

/**
 * A throwaway project holding two packages that are installed but import a package that is not,
 * one ESM and one CommonJS (as pg is), and a module that imports them by name as an entry would.
 */
let dir = "";
let loaders: { esm: () => Promise<unknown>; cjs: () => Promise<unknown>; absent: () => Promise<unknown> };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rp-optional-peer-"));
  const pkg = (name: string, type: string, main: string, source: string) => {
    mkdirSync(join(dir, "node_modules", name), { recursive: true });
    writeFileSync(join(dir, "node_modules", name, "package.json"), JSON.stringify({ name, type, main }));
    writeFileSync(join(dir, "node_modules", name, main), source);
  };
  pkg("present-esm-peer", "module", "index.js", `import "${ABSENT}";\nexport const ok = true;\n`);
  pkg("present-cjs-peer", "commonjs", "index.js", `require("${ABSENT}");\nexports.ok = true;\n`);
  writeFileSync(
    join(dir, "entry.mjs"),
    'export const esm = () => import("present-esm-peer");\nexport const cjs = () => import("present-cjs-peer");\nexport const absent = () => import("absent-peer");\n',
  );
  loaders = await import(/* @vite-ignore */ pathToFileURL(join(dir, "entry.mjs")).href);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What importOptional rejects with. */
const failure = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => expect.fail("resolved"), (error: unknown) => error);

/** An optional peer that is not installed is named in one line saying how to install it. */
describe("importOptional", () => {
  it("resolves to the module when the package is installed", async () => {
    const path = await importOptional(() => import("node:path"), "node:path", "a test");
    expect(path.join("a", "b")).toBe("a/b");
  });

  it("names a package that is not installed and how to install it, keeping Node's error as the cause", async () => {
    const error = await failure(importOptional(() => import(ABSENT), ABSENT, "openSqliteStorage"));
    expect(error).toBeInstanceOf(MissingPeerError);
    expect(error).toMatchObject({
      name: "MissingPeerError",
      packageName: ABSENT,
      message: `openSqliteStorage needs the package ${ABSENT}, which is not installed: npm install ${ABSENT}`,
    });
    const cause = (error as Error).cause as NodeJS.ErrnoException;
    expect(cause.code).toBe("ERR_MODULE_NOT_FOUND");
    expect(cause.message).toMatch(new RegExp(`^Cannot find package '${ABSENT}' imported from `));
  });

  it("names it too when imported from another module or required as CommonJS", async () => {
    const fromEntry = await failure(importOptional(loaders.absent, "absent-peer", "GET /metrics"));
    expect(fromEntry).toMatchObject({ name: "MissingPeerError", packageName: "absent-peer" });
    const require = createRequire(import.meta.url);
    const required = await failure(importOptional(async () => require(ABSENT), ABSENT, "migrate"));
    expect(required).toMatchObject({ name: "MissingPeerError", message: `migrate needs the package ${ABSENT}, which is not installed: npm install ${ABSENT}` });
    expect(((required as Error).cause as NodeJS.ErrnoException).code).toBe("MODULE_NOT_FOUND");
  });

  it("rethrows as is the error of an installed package whose own import of another package fails", async () => {
    for (const [name, load] of [["present-esm-peer", loaders.esm], ["present-cjs-peer", loaders.cjs]] as const) {
      const direct = await failure(load());
      const error = await failure(importOptional(load, name, "createPostgresStorage"));
      expect(error, name).not.toBeInstanceOf(MissingPeerError);
      expect((error as Error).message, name).toBe((direct as Error).message);
      expect((error as Error).message, name).toContain(`'${ABSENT}'`);
      expect((error as Error).message, name).toContain(join("node_modules", name));
    }
  });

  it("rethrows any other failure as is", async () => {
    const boom = new TypeError("boom");
    expect(await failure(importOptional(() => Promise.reject(boom), "pg", "a test"))).toBe(boom);
    const other = Object.assign(new Error("Cannot find package 'pg-types' imported from /app/node_modules/pg/lib/index.js"), { code: "ERR_MODULE_NOT_FOUND" });
    expect(await failure(importOptional(() => Promise.reject(other), "pg", "a test"))).toBe(other);
    expect(await failure(importOptional(() => Promise.reject(null), "pg", "a test"))).toBeNull();
  });
});
