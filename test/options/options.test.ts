import { metrics, trace } from "@opentelemetry/api";
import { describe, expect, expectTypeOf, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createKeyring, createRunplane, generateKey, RunplaneOptionsError, silentLogger, type Logger, type RunplaneOptions } from "../../src/index.js";
import { OPTION_NAMES } from "../../src/options.js";

const storage = () => createMemoryStorage();
const attempt = (options: Partial<RunplaneOptions> & Record<string, unknown>) => {
  try {
    createRunplane({ logger: silentLogger, ...options } as RunplaneOptions);
  } catch (error) {
    return error as RunplaneOptionsError;
  }
  throw new Error("createRunplane accepted the options");
};

describe("createRunplane checks its options up front", () => {
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
    expect(error.option).toBe("keyring.keys[0].key");
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

  it("accepts a valid set and a Keyring instance", async () => {
    const keyring = createKeyring({ keys: [{ id: "k1", key: generateKey() }] });
    const runplane = createRunplane({ storage: storage(), logger: silentLogger, keyring, dialect: "hcp-terraform", basePath: "/tfe/api/v2", readCache: false });
    expect(runplane.routes[0]!.path.startsWith("/tfe/api/v2")).toBe(true);
    await runplane.close();
  });
});

describe("createRunplane refuses options it does not know", () => {
  it("names each misspelt option and the known one it is closest to", () => {
    const error = attempt({ stoarge: storage(), dialct: "hcp-terraform" });
    expect(error).toBeInstanceOf(RunplaneOptionsError);
    expect(error.option).toBe("stoarge");
    expect(error.message).toContain('unknown option "stoarge": did you mean "storage"?');
    expect(error.message).toContain('unknown option "dialct": did you mean "dialect"?');
  });

  it("names a misspelt nested option with its path", () => {
    expect(attempt({ storage: storage(), egress: { alow: ["10.0.0.0/8"] } as never }).message).toContain('unknown option "egress.alow": did you mean "egress.allow"?');
    expect(attempt({ storage: storage(), deadline: { idle: "1m", max: "2m", maxx: "3m" } as never }).option).toBe("deadline.maxx");
  });

  it("names the closest option inside attempts (D31)", () => {
    const error = attempt({ storage: storage(), attempts: { retension: "7d" } } as never);
    expect(error.option).toBe("attempts.retension");
    expect(error.message).toContain('did you mean "attempts.retention"?');
  });

  it("names the closest option inside health", () => {
    const error = attempt({ storage: storage(), health: { retryingFr: "5m" } } as never);
    expect(error.option).toBe("health.retryingFr");
    expect(error.message).toContain('did you mean "health.retryingFor"?');
  });

  it("lists the known options when nothing is close", () => {
    const error = attempt({ storage: storage(), futureOption: 1 });
    expect(error.option).toBe("futureOption");
    expect(error.message).toMatch(/unknown option "futureOption": the known ones are storage, .*egress/);
  });

  it("knows every option of RunplaneOptions, and only those", async () => {
    expectTypeOf<(typeof OPTION_NAMES)[number]>().toEqualTypeOf<keyof RunplaneOptions>();
    // Every name is accepted with a valid value.
    const runplane = createRunplane({
      storage: storage(),
      basePath: "/api/v2",
      authenticate: async () => null,
      dialect: "default",
      keyring: { keys: [{ id: "k1", key: generateKey() }] },
      clock: () => new Date(),
      logger: silentLogger,
      meterProvider: metrics.getMeterProvider(),
      tracerProvider: trace.getTracerProvider(),
      publicUrl: "https://runplane.example.com",
      appUrl: "https://app.example.com",
      overridableTasks: true,
      deadline: { idle: "10m", max: 3_600_000 },
      userAgent: "test/1.0",
      egress: { allow: ["10.1.0.0/16", "127.0.0.1:8081", "[::1]:443", "tasks.internal"], resolve: async () => [], wide: false, minPrefix: { ipv4: 16, ipv6: 48 }, excerpts: "status" },
      readCache: { maxBytes: 1024 },
      artifacts: { planJson: async () => null, planLog: () => "log" },
      runs: { details: () => ({ status: "applied" }), policyChecks: () => [] },
      logUrls: { lifetime: "10m" },
      attempts: { retention: "7d" },
      audit: { retention: "365d" },
      health: { window: "10m", failureShare: 0.25, minAttempts: 10, retryingFor: 120_000, noAgentFor: "10m" },
      agentRecords: { retention: "3d", maxPerToken: 10, maxPerPool: 20 },
      host: { name: "web-1", intervalMs: 5_000, schedule: () => () => undefined },
      rateLimit: { requestsPerSecond: 30, burst: 30, callbacksPerSecond: 1, callbackBurst: 10, maxKeys: 100 },
      trustProxy: 1,
    } satisfies Required<Omit<RunplaneOptions, "transport">>);
    await runplane.close();
  });
});

describe("every option error names its option and comes before anything is logged", () => {
  /** A logger that records warnings: the ephemeral-key warning must not precede a refusal. */
  const recording = () => {
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (message: string) => void warnings.push(message) };
    return { logger, warnings };
  };

  it.each([
    ["publicUrl", { publicUrl: "localhost:8080" }, 'got "localhost:8080"'],
    ["appUrl", { appUrl: "not a url" }, "absolute http(s) URL"],
    ["deadline.idle", { deadline: { idle: "10 minutes", max: "1h" } }, 'such as "90s", "10m", "1h"; got "10 minutes"'],
    ["deadline.max", { deadline: { idle: "10m", max: "5m" } }, "must not be shorter than deadline.idle"],
    ["egress.allow[2]", { egress: { allow: ["10.1.0.0/16", "127.0.0.1:8081", "10.0.0.0/99"] } }, 'has an invalid prefix length (0-32); got "10.0.0.0/99"'],
    ["egress.allow[0]", { egress: { allow: ["127.0.0.1:99999"] } }, "has an invalid port (1-65535)"],
    ["egress.allow", { egress: { allow: "10.0.0.0/8" } }, "must be an array of strings"],
    ["transport", { transport: {} }, "must be an HttpTransport"],
    ["meterProvider", { meterProvider: {} }, "must be an OpenTelemetry MeterProvider"],
    ["tracerProvider", { tracerProvider: { getTracer: 1 } }, "must be an OpenTelemetry TracerProvider"],
    ["overridableTasks", { overridableTasks: "yes" }, "must be true or false"],
    ["attempts.retention", { attempts: { retention: "a week" } }, 'such as "90s", "10m", "1h"; got "a week"'],
    ["health.window", { health: { window: "5 minutes" } }, 'such as "90s", "10m", "1h"; got "5 minutes"'],
    ["health.retryingFor", { health: { retryingFor: -1 } }, "must be a positive duration"],
    ["health.failureShare", { health: { failureShare: 0 } }, "must be a share above 0 and at most 1, such as 0.5; got 0"],
    ["health.failureShare", { health: { failureShare: 50 } }, "must be a share above 0 and at most 1, such as 0.5; got 50"],
    ["health.minAttempts", { health: { minAttempts: 2.5 } }, "must be a positive integer; got 2.5"],
    ["host.intervalMs", { host: { intervalMs: 10 } }, "at least 100; got 10"],
    ["host.name", { host: { name: "" } }, "must not be empty"],
  ])("names %s", (option, given, text) => {
    const { logger, warnings } = recording();
    const error = attempt({ storage: storage(), ...(given as Partial<RunplaneOptions>), logger });
    expect(error).toBeInstanceOf(RunplaneOptionsError);
    expect(error.option).toBe(option);
    expect(error.message).toContain(`option \`${option}\``);
    expect(error.message).toContain(text);
    expect(warnings).toEqual([]);
  });
});

describe("keyring errors say which key and why", () => {
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
