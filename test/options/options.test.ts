import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createKeyring, createRunplane, generateKey, RunplaneOptionsError, silentLogger, type RunplaneOptions } from "../../src/index.js";

const storage = () => createMemoryStorage();
const attempt = (options: Partial<RunplaneOptions> & Record<string, unknown>) => {
  try {
    createRunplane({ logger: silentLogger, ...options } as RunplaneOptions);
  } catch (error) {
    return error as RunplaneOptionsError;
  }
  throw new Error("createRunplane accepted the options");
};

describe("createRunplane checks its options up front (issue 17.4)", () => {
  it("names a missing storage and says which adapters to pass", () => {
    const error = attempt({});
    expect(error).toBeInstanceOf(RunplaneOptionsError);
    expect(error).toBeInstanceOf(TypeError);
    expect(error.option).toBe("storage");
    expect(error.message).toContain("option `storage` is required; got nothing");
    expect(error.message).toContain("createMemoryStorage()");
  });

  it("refuses something that is not a storage adapter", () => {
    const error = attempt({ storage: { projects: 1 } as never });
    expect(error.message).toMatch(/`storage` must be a storage adapter; got an object with projects/);
  });

  it("names an unknown dialect, shows it and lists the known ones", () => {
    const error = attempt({ storage: storage(), dialect: "hcp" as never });
    expect(error.option).toBe("dialect");
    expect(error.message).toContain('got "hcp"');
    expect(error.message).toContain('"default", "hcp-terraform"');
  });

  it.each(["/api/:v", "/api/*", "api/v2"])("refuses the basePath %s", (basePath) => {
    const error = attempt({ storage: storage(), basePath });
    expect(error.option).toBe("basePath");
    expect(error.message).toContain(`got ${JSON.stringify(basePath)}`);
    expect(error.message).toContain('"/api/v2"');
  });

  it("says an unset key is undefined and how to make one", () => {
    const error = attempt({ storage: storage(), keyring: { keys: [{ id: "k1", key: process.env.RUNPLANE_TEST_UNSET_KEY! }] } });
    expect(error.option).toBe("keyring.keys.0.key");
    expect(error.message).toContain("must be 32 bytes of base64; got undefined");
    expect(error.message).toContain("npx runplane keygen");
    expect(error.message).toContain("generateKey()");
  });

  it("recognises a hex key, tells how to convert it and never echoes it", () => {
    const hex = "ab".repeat(32);
    const error = attempt({ storage: storage(), keyring: { keys: [{ id: "k1", key: hex }] } });
    expect(error.message).toContain("64 hex characters");
    expect(error.message).toContain('Buffer.from(hex, "hex").toString("base64")');
    expect(error.message).not.toContain(hex);
  });

  it("refuses a base64 key of the wrong length without echoing it", () => {
    const short = Buffer.alloc(16, 7).toString("base64");
    const error = attempt({ storage: storage(), keyring: { keys: [{ id: "k1", key: short }] } });
    expect(error.message).toContain('(id "k1") must be 32 bytes of base64');
    expect(error.message).not.toContain(short);
  });

  it("names readCache and function options given the wrong shape", () => {
    expect(attempt({ storage: storage(), readCache: true as never }).option).toBe("readCache");
    expect(attempt({ storage: storage(), clock: "now" as never }).message).toContain("`clock` must be a function");
  });

  it("accepts a valid set, a Keyring instance, and options it does not list", async () => {
    const keyring = createKeyring({ keys: [{ id: "k1", key: generateKey() }] });
    const runplane = createRunplane({ storage: storage(), logger: silentLogger, keyring, dialect: "hcp-terraform", basePath: "/tfe/api/v2", readCache: false, ...{ futureOption: 1 } });
    expect(runplane.routes[0]!.path.startsWith("/tfe/api/v2")).toBe(true);
    await runplane.close();
  });
});

describe("keyring errors say which key and why (issue 17.4)", () => {
  it("a value sealed under another key with the same id names the id and the likely cause", () => {
    const before = createKeyring({ keys: [{ id: "prod-2026", key: generateKey() }] });
    const sealed = before.seal("secret", "vars|value|var-1");
    const after = createKeyring({ keys: [{ id: "prod-2026", key: generateKey() }] });
    expect(() => after.open(sealed, "vars|value|var-1")).toThrow(/keyring key "prod-2026".*not the one it was sealed with/);
  });

  it("a value sealed under a key the keyring no longer holds names that id", () => {
    const sealed = createKeyring({ keys: [{ id: "old", key: generateKey() }] }).seal("secret", "ad");
    const ring = createKeyring({ keys: [{ id: "new", key: generateKey() }] });
    expect(() => ring.open(sealed, "ad")).toThrow(/keyring key "old": the keyring has no key with that id/);
  });

  it("createKeyring on its own gives the same key advice", () => {
    expect(() => createKeyring({ keys: [{ id: "k", key: "" }] })).toThrow(/keyring key "k" must be 32 bytes of base64; got an empty string.*runplane keygen/);
    expect(() => createKeyring({ keys: [{ id: "k", key: Buffer.alloc(32) }] })).not.toThrow();
  });
});

describe("keyring key formats that hold 32 bytes", () => {
  it("accepts standard and URL-safe base64, padded or not, and a trailing newline from a file", () => {
    const bytes = Buffer.alloc(32, 0xfb);
    for (const key of [bytes.toString("base64"), bytes.toString("base64url"), `${bytes.toString("base64url")}=`, `${bytes.toString("base64")}\n`]) {
      const ring = createKeyring({ keys: [{ id: "k", key }] });
      const reference = createKeyring({ keys: [{ id: "k", key: bytes }] });
      expect(reference.open(ring.seal("v", "ad"), "ad")).toBe("v");
    }
  });
});
