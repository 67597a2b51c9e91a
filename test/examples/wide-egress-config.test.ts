import { describe, expect, it } from "vitest";
import { preflight, runChecks } from "../../examples/server/checks.js";
import { readServerConfig } from "../../examples/server/config.js";
import { doctor } from "../../src/cli/doctor.js";
import { parse } from "../../src/cli/args.js";
import { BASE_ENV, run, scratchDirs, serve } from "../cli/helpers.js";

// Decision D38 in the reference server: EGRESS_ALLOW with a wide entry refuses to start, naming the
// entry and pointing at agents, unless EGRESS_ALLOW_WIDE=1 (--egress-allow-wide); with the switch on,
// doctor says "warn" for egress and the banner warns. EGRESS_EXCERPTS=full keeps the answers of
// allowlisted destinations whole.

const { fresh } = scratchDirs();
const settings = (args: string[], env: Record<string, string> = {}) =>
  parse(["--port", "0", "--integration-port", "0", "--data-dir", fresh(), ...args], {}, true, { ...BASE_ENV, ...env }).env;

describe("reference server: wide EGRESS_ALLOW entries", () => {
  it("refuses a wide entry, naming it, the reason, agents and the switch", () => {
    const { problems } = readServerConfig({ EGRESS_ALLOW: "10.1.2.3:443, 0.0.0.0/0" });
    expect(problems).toStrictEqual([
      {
        variable: "EGRESS_ALLOW",
        message:
          'EGRESS_ALLOW (--egress-allow) entry "0.0.0.0/0" is wide: it covers every IPv4 address; private integrations belong behind agents (decision D34, private run tasks through agents), ' +
          "not behind a wide allowlist entry; list the integration's own address (best with its port) or a network no wider than the bound (no wider than a /16 of an IPv4 private range or a /48 of fc00::/7), " +
          "or set EGRESS_ALLOW_WIDE (--egress-allow-wide) to 1 to accept it knowingly",
      },
    ]);
  });

  it.each(["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fd00::/8", "169.254.169.254", "127.0.0.0/8", "::/0"])("refuses to start with EGRESS_ALLOW=%s", async (entry) => {
    await expect(preflight(settings(["--egress-allow", entry]))).rejects.toThrow(`EGRESS_ALLOW (--egress-allow) entry "${entry}" is wide: it `);
  });

  // decision D43: the entries judged together, and loopback without a port.
  const sixteens = Array.from({ length: 256 }, (_, i) => `10.${i}.0.0/16`).join(",");
  it.each([
    ["256 /16 entries covering 10.0.0.0/8", sixteens, 'EGRESS_ALLOW (--egress-allow) entries "10.0.0.0/16", "10.1.0.0/16", "10.2.0.0/16", "10.3.0.0/16" and 252 more are wide together: they together cover the whole of the private range 10.0.0.0/8'],
    ["two /17s covering 192.168.0.0/16", "192.168.0.0/17,192.168.128.0/17", 'EGRESS_ALLOW (--egress-allow) entries "192.168.0.0/17", "192.168.128.0/17" are wide together: they together cover the whole of the private range 192.168.0.0/16'],
    ["127.0.0.1 without a port", "127.0.0.1", 'EGRESS_ALLOW (--egress-allow) entry "127.0.0.1" is wide: it admits every port of the loopback address, this server\'s own API and its database among them; give the port (127.0.0.1:8081)'],
    ["::1 without a port", "::1", 'EGRESS_ALLOW (--egress-allow) entry "::1" is wide: it admits every port of the loopback address'],
    ["localhost without a port", "tasks.internal:443,localhost", 'EGRESS_ALLOW (--egress-allow) entry "localhost" is wide: it admits every port of the loopback address'],
    // Found from outside: IPv4-mapped, NAT64 and 6to4 spellings of 127.0.0.1 reached the server's own API and PostgreSQL.
    ["::ffff:127.0.0.1 without a port", "::ffff:127.0.0.1", 'EGRESS_ALLOW (--egress-allow) entry "::ffff:127.0.0.1" is wide: it admits every port of the loopback address'],
    ["[::ffff:127.0.0.1] without a port", "[::ffff:127.0.0.1]", 'EGRESS_ALLOW (--egress-allow) entry "[::ffff:127.0.0.1]" is wide: it admits every port of the loopback address'],
    ["::ffff:7f00:1 without a port", "::ffff:7f00:1", 'EGRESS_ALLOW (--egress-allow) entry "::ffff:7f00:1" is wide: it admits every port of the loopback address'],
    ["64:ff9b::7f00:1 without a port", "64:ff9b::7f00:1", 'EGRESS_ALLOW (--egress-allow) entry "64:ff9b::7f00:1" is wide: it admits every port of the loopback address'],
    ["2002:7f00:1:: without a port", "2002:7f00:1::", 'EGRESS_ALLOW (--egress-allow) entry "2002:7f00:1::" is wide: it admits every port of the loopback address'],
    ["a bare metadata host name", "metadata.google.internal", 'EGRESS_ALLOW (--egress-allow) entry "metadata.google.internal" is wide: it names a cloud metadata service'],
    ["metadata", "metadata", 'EGRESS_ALLOW (--egress-allow) entry "metadata" is wide: it names a cloud metadata service'],
    ["instance-data", "tasks.internal:443,instance-data", 'EGRESS_ALLOW (--egress-allow) entry "instance-data" is wide: it names a cloud metadata service'],
  ])("refuses to start with %s, and doctor fails the options", async (_, allow, says) => {
    await expect(preflight(settings(["--egress-allow", allow]))).rejects.toThrow(says);
    const checks = await runChecks(settings(["--egress-allow", allow]));
    expect(checks.find((c) => c.name === "options")!.verdict).toStrictEqual({ fix: expect.stringContaining(says) });
    expect(checks.find((c) => c.name === "egress")!.verdict).not.toHaveProperty("note");
  });

  it("starts with entries wide together or a portless loopback when EGRESS_ALLOW_WIDE is 1, and doctor warns", async () => {
    const env = settings(["--egress-allow", "192.168.0.0/17,192.168.128.0/17,127.0.0.1,tasks.internal:443", "--egress-allow-wide", "1"]);
    await preflight(env);
    const egress = (await runChecks(env)).find((c) => c.name === "egress")!;
    expect(egress.verdict).toMatchObject({
      warn: expect.stringContaining(
        'EGRESS_ALLOW has wide entries: 127.0.0.1 (admits every port of the loopback address, this server\'s own API and its database among them), "192.168.0.0/17", "192.168.128.0/17" (together cover the whole of the private range 192.168.0.0/16)',
      ),
    });
  });

  it("starts with a wide entry when EGRESS_ALLOW_WIDE is 1, and doctor warns instead of saying ok", async () => {
    const env = settings(["--egress-allow", "10.0.0.0/8,tasks.internal:443", "--egress-allow-wide", "1"]);
    const config = await preflight(env);
    expect(config).toMatchObject({ egressAllow: ["10.0.0.0/8", "tasks.internal:443"], egressAllowWide: true });
    const egress = (await runChecks(env)).find((c) => c.name === "egress")!;
    expect(egress.verdict).toStrictEqual({
      warn:
        "runplane may reach the bundled integration on 127.0.0.1 and EGRESS_ALLOW 10.0.0.0/8, tasks.internal:443; other private addresses stay refused. " +
        "EGRESS_ALLOW_WIDE (--egress-allow-wide) is on and EGRESS_ALLOW has wide entries: 10.0.0.0/8 (covers the whole of the private range 10.0.0.0/8); " +
        "whoever may manage run tasks can send requests into those networks. Private integrations belong behind agents (decision D34, private run tasks through agents)",
    });
    const lines: string[] = [];
    const args = ["--port", "0", "--integration-port", "0", "--data-dir", fresh(), "--database-url", "", "--egress-allow", "10.0.0.0/8", "--egress-allow-wide", "1"];
    expect(await doctor(args, (line) => lines.push(line))).toBe(true);
    expect(lines.find((line) => line.includes("egress"))).toMatch(/^warn egress: runplane may reach .* EGRESS_ALLOW_WIDE \(--egress-allow-wide\) is on and EGRESS_ALLOW has wide entries: 10\.0\.0\.0\/8 /);
  });

  it("warns about the switch even when no entry needs it", async () => {
    const egress = (await runChecks(settings(["--egress-allow-wide", "1"]))).find((c) => c.name === "egress")!;
    expect(egress.verdict).toMatchObject({ warn: expect.stringContaining("EGRESS_ALLOW_WIDE (--egress-allow-wide) is on, though no EGRESS_ALLOW entry is wide: turn it off") });
  });

  it("reads the switch and the excerpt mode, and refuses values it does not know", () => {
    expect(readServerConfig({}).config).toMatchObject({ egressAllowWide: false, egressExcerpts: "status" });
    expect(readServerConfig({ EGRESS_ALLOW_WIDE: "0", EGRESS_EXCERPTS: "full" }).config).toMatchObject({ egressAllowWide: false, egressExcerpts: "full" });
    expect(readServerConfig({ EGRESS_ALLOW_WIDE: "true" }).config.egressAllowWide).toBe(true);
    expect(readServerConfig({ EGRESS_ALLOW_WIDE: "maybe", EGRESS_EXCERPTS: "some" }).problems).toStrictEqual([
      { variable: "EGRESS_ALLOW_WIDE", message: 'EGRESS_ALLOW_WIDE (--egress-allow-wide) must be 1 (accept wide EGRESS_ALLOW entries) or 0 (the default); got "maybe"' },
      { variable: "EGRESS_EXCERPTS", message: 'EGRESS_EXCERPTS (--egress-excerpts) must be "status" (the default: keep only the status line of answers from destinations EGRESS_ALLOW admits) or "full"; got "some"' },
    ]);
  });

  it("refuses to start with the entry and agents named, and with the switch on starts and warns in its banner", async () => {
    const refused = await run(["serve", "--port", "0", "--integration-port", "0", "--data-dir", fresh(), "--egress-allow", "192.168.0.0/16"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('EGRESS_ALLOW (--egress-allow) entry "192.168.0.0/16" is wide: it covers the whole of the private range 192.168.0.0/16; private integrations belong behind agents (decision D34');

    const s = await serve(fresh(), ["--egress-allow", "192.168.0.0/16", "--egress-allow-wide", "1"]);
    try {
      expect(s.output()).toContain(
        "\nwarning: EGRESS_ALLOW_WIDE (--egress-allow-wide) is on and EGRESS_ALLOW has wide entries: 192.168.0.0/16 (covers the whole of the private range 192.168.0.0/16); whoever may manage run tasks",
      );
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });
});
