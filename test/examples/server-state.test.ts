import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDataDir } from "../../examples/server/state.js";
import { generateKey } from "../../src/index.js";

describe("reference server DATA_DIR", () => {
  const dirs: string[] = [];
  const fresh = (): string => {
    const dir = mkdtempSync(join(tmpdir(), "runplane-state-"));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("gives every host opening one directory the same keyring and HMAC key, in files only their owner reads", () => {
    const dir = fresh();
    const first = openDataDir(dir, {});
    const second = openDataDir(dir, {});
    expect(second.keyring()).toStrictEqual(first.keyring());
    expect(second.integrationHmacKey()).toBe(first.integrationHmacKey());
    expect(statSync(join(dir, "keyring.json")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "integration-hmac-key")).mode & 0o777).toBe(0o600);
  });

  it("takes the keyring and HMAC key from RUNPLANE_KEYRING and INTEGRATION_HMAC_KEY, writing no files", () => {
    const dir = fresh();
    const keyring = { keys: [{ id: "k2", key: generateKey() }], active: "k2" };
    const data = openDataDir(dir, { RUNPLANE_KEYRING: JSON.stringify(keyring), INTEGRATION_HMAC_KEY: "shared-hmac-key" });
    expect(data.keyring()).toStrictEqual(keyring);
    expect(data.integrationHmacKey()).toBe("shared-hmac-key");
    expect(existsSync(join(dir, "keyring.json"))).toBe(false);
  });

  it("refuses a RUNPLANE_KEYRING that is not a keyring, without quoting it", () => {
    const secret = generateKey();
    const data = openDataDir(fresh(), { RUNPLANE_KEYRING: `{"keys": "${secret}"` });
    expect(() => data.keyring()).toThrow(/^RUNPLANE_KEYRING is not valid JSON \(line 1, column 56\): it must be JSON like /);
    expect(() => data.keyring()).not.toThrow(secret);
  });
});
