import { describe, expect, it } from "vitest";
import { parse, SERVER_FLAGS } from "../../src/cli/args.js";

describe("runplane flags", () => {
  it("mirror the server's environment variables, a flag winning over its variable", () => {
    const { env } = parse(["--port", "9000", "--database-schema", "tenant_a"], {}, true, { PORT: "8080", HOST: "0.0.0.0" });
    expect(env).toMatchObject({ PORT: "9000", HOST: "0.0.0.0", DATABASE_SCHEMA: "tenant_a" });
  });

  it("has a flag for every variable the server reads", () => {
    expect(Object.values(SERVER_FLAGS).sort()).toEqual(
      ["ADMIN_TOKEN", "DATABASE_POOL_SIZE", "DATABASE_SCHEMA", "DATABASE_URL", "DATA_DIR", "HOST", "INTEGRATION_HMAC_KEY", "INTEGRATION_PORT", "INTEGRATION_URL", "PORT", "PUBLIC_URL", "RUNPLANE_DIALECT", "RUNPLANE_KEYRING"],
    );
  });

  it("refuses an unknown flag, and server flags where a command takes none", () => {
    expect(() => parse(["--prot", "1"])).toThrow(/Unknown option '--prot'/);
    expect(() => parse(["--port", "1"], {}, false)).toThrow(/Unknown option '--port'/);
  });
});
