import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createKeyring } from "../../src/index.js";
import { parse } from "../../src/cli/args.js";
import { run, serve, scratchDirs } from "./helpers.js";

scratchDirs();

describe("runplane keygen", () => {
  it("prints a new 32-byte key, or with --json a keyring the server accepts", async () => {
    const plain = await run(["keygen"]);
    expect(plain.code).toBe(0);
    expect(Buffer.from(plain.stdout.trim(), "base64")).toHaveLength(32);
    const json = await run(["keygen", "--json", "--id", "k2"]);
    const keyring = JSON.parse(json.stdout);
    expect(keyring.active).toBe("k2");
    expect(createKeyring(keyring).activeKeyId).toBe("k2");
    expect(keyring.keys[0].key).not.toBe(plain.stdout.trim());
  });

  // The rotation guide's first step (docs/guides/operating.md) adds `runplane keygen --id k2`'s
  // output to `keys`: the id must be in it, not dropped for a bare key.
  it("with --id alone prints the keyring entry with that id, ready to add to keys", async () => {
    const result = await run(["keygen", "--id", "k2"]);
    expect(result.code).toBe(0);
    const entry = JSON.parse(result.stdout);
    expect(Object.keys(entry)).toEqual(["id", "key"]);
    expect(entry.id).toBe("k2");
    expect(Buffer.from(entry.key, "base64")).toHaveLength(32);
    expect(createKeyring({ keys: [{ id: "k1", key: Buffer.alloc(32).toString("base64") }, entry], active: "k1" }).keyIds).toContain("k2");
  });
});

describe("runplane help and version", () => {
  it("prints its version", async () => {
    const result = await run(["--version"]);
    expect(result.stdout).toBe(`${JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version}\n`);
    expect(result.code).toBe(0);
  });

  it.each([
    ["migrate", ["--data-dir", "--database-url", "--database-schema"]],
    ["reencrypt", ["--data-dir", "--database-url", "--database-schema", "--keyring"]],
    ["token", ["--data-dir", "--database-url", "--database-schema", "--keyring"]],
  ])("lists only the flags %s takes, and refuses the server's others", async (command, flags) => {
    const help = (await run([command, "--help"])).stdout;
    const listed = [...help.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]);
    expect(listed).toStrictEqual(flags);
    const refused = await run([command, ...(command === "token" ? ["create"] : []), "--port", "9000"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/unknown flag --port/);
  });
});

describe("runplane", () => {
  it("names an unknown command and prints the usage, exit 2", async () => {
    const result = await run(["frobnicate"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^runplane: unknown command frobnicate\nusage: runplane <command>/);
  });

  it("reports an unknown flag in one line, exit 1, with the flag it is closest to", async () => {
    const result = await run(["keygen", "--port", "1"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("runplane keygen: unknown flag --port (--help lists the flags)\n");
    expect((await run(["serve", "--dialcet", "hcp-terraform"])).stderr).toBe("runplane serve: unknown flag --dialcet: did you mean --dialect? (--help lists the flags)\n");
  });
});
