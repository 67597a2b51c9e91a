import { describe, expect, it } from "vitest";
import { parse, SERVER_FLAGS } from "../../src/cli/args.js";

describe("runplane flags", () => {
  it("mirror the server's environment variables, a flag winning over its variable", () => {
    const { env } = parse(["--port", "9000", "--database-schema", "tenant_a"], {}, true, { PORT: "8080", HOST: "0.0.0.0" });
    expect(env).toMatchObject({ PORT: "9000", HOST: "0.0.0.0", DATABASE_SCHEMA: "tenant_a" });
  });

  it("has a flag for every variable the server reads", () => {
    expect(Object.values(SERVER_FLAGS).sort()).toEqual(
      ["ADMIN_TOKEN", "DATABASE_POOL_SIZE", "DATABASE_SCHEMA", "DATABASE_URL", "DATA_DIR", "EGRESS_ALLOW", "EGRESS_ALLOW_WIDE", "EGRESS_EXCERPTS", "HOST", "INTEGRATION_HMAC_KEY", "INTEGRATION_PORT", "INTEGRATION_URL", "LOG_URL_LIFETIME", "METRICS_TOKEN", "PORT", "PUBLIC_URL", "RATE_LIMIT", "RUNPLANE_DIALECT", "RUNPLANE_KEYRING", "TRUST_PROXY"],
    );
  });

  it("refuses an unknown flag naming the closest known one, and server flags where a command takes none", () => {
    expect(() => parse(["--prot", "1"])).toThrow("unknown flag --prot: did you mean --port? (--help lists the flags)");
    expect(() => parse(["--egress-alow", "10.0.0.0/8"])).toThrow("did you mean --egress-allow?");
    expect(() => parse(["--port", "1"], {}, false)).toThrow("unknown flag --port (--help lists the flags)");
  });

  it("puts a value that starts with a dash, and Node's advice about it, on one line", () => {
    expect(() => parse(["--database-pool-size", "-3"])).toThrow(/^Option '--database-pool-size' argument is ambiguous\. .*'--database-pool-size=-XYZ'\.$/);
    expect(parse(["--database-pool-size=-3"]).env.DATABASE_POOL_SIZE).toBe("-3");
  });
});
