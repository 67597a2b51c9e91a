import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createEgressPolicy } from "../../src/delivery/address-policy.js";
import { wideEntryProblem } from "../../src/delivery/wide-entries.js";
import { createEgress, createRunplane, RunplaneOptionsError, silentLogger } from "../../src/index.js";

// Decision D38: an allowlist entry that covers a default route, a whole private range, more of a
// private range than the bound (/16 of IPv4, /48 of ULA), link-local, a metadata address or the
// unspecified address is refused unless the operator switches wide entries on.

const WIDE: [string, string][] = [
  ["0.0.0.0/0", "covers every IPv4 address"],
  ["::/0", "covers every IPv6 address"],
  ["0.0.0.0/1", "covers the whole of the private range 10.0.0.0/8"],
  ["8.0.0.0/6", "covers the whole of the private range 10.0.0.0/8"],
  ["10.0.0.0/8", "covers the whole of the private range 10.0.0.0/8"],
  ["10.0.0.0/12", "covers a /12 of the private range 10.0.0.0/8, wider than /16"],
  ["172.16.0.0/12", "covers the whole of the private range 172.16.0.0/12"],
  ["172.20.0.0/15", "covers a /15 of the private range 172.16.0.0/12, wider than /16"],
  ["192.168.0.0/16", "covers the whole of the private range 192.168.0.0/16"],
  ["100.64.0.0/10", "covers the whole of the shared (carrier-grade NAT) range 100.64.0.0/10"],
  ["127.0.0.0/8", "covers the whole of the loopback range 127.0.0.0/8"],
  ["0.0.0.0/8", "reaches into 0.0.0.0/8"],
  ["0.0.0.0", "reaches into 0.0.0.0/8"],
  ["169.254.0.0/16", "reaches into the link-local range 169.254.0.0/16"],
  ["169.254.169.254", "reaches into the link-local range 169.254.0.0/16"],
  ["169.254.169.254:80", "reaches into the link-local range 169.254.0.0/16"],
  ["169.254.10.20/32", "reaches into the link-local range 169.254.0.0/16"],
  ["100.100.100.200", "reaches into the cloud metadata address 100.100.100.200"],
  ["fe80::/10", "reaches into the link-local range fe80::/10"],
  ["[fe80::1]:8080", "reaches into the link-local range fe80::/10"],
  ["fc00::/7", "covers the whole of the unique local range fc00::/7"],
  ["fd00::/8", "covers a /8 of the unique local range fc00::/7, wider than /48"],
  ["fd12:3456::/32", "covers a /32 of the unique local range fc00::/7, wider than /48"],
  ["fd00:ec2::254", "reaches into the cloud metadata address fd00:ec2::254"],
  ["[fd00:ec2::254]:80", "reaches into the cloud metadata address fd00:ec2::254"],
  ["::", "reaches into the unspecified address ::"],
  // Addresses that carry an IPv4 address are judged by the IPv4 network they reach.
  ["::ffff:0:0/96", "covers every IPv4 address"],
  ["::ffff:10.0.0.0/104", "covers the whole of the private range 10.0.0.0/8"],
  ["::ffff:169.254.169.254", "reaches into the link-local range 169.254.0.0/16"],
  ["64:ff9b::a9fe:a9fe", "reaches into the link-local range 169.254.0.0/16"],
  ["2002::/16", "covers every IPv4 address"],
  ["2002:c0a8::/32", "covers the whole of the private range 192.168.0.0/16"],
  // decision D43 (found from outside): the metadata services' own names, as wide as their addresses, port or not.
  ["metadata.google.internal", "names a cloud metadata service (metadata.google.internal)"],
  ["Metadata.Google.Internal.", "names a cloud metadata service (metadata.google.internal)"],
  ["metadata:80", "names a cloud metadata service (metadata)"],
  ["instance-data", "names a cloud metadata service (instance-data)"],
];

const NARROW = [
  "10.1.0.0/16", "10.1.2.3", "10.1.2.3:8443", "172.16.5.0/24", "192.168.1.0/24", "100.64.1.0/24", "127.0.0.1/32",
  "127.0.0.1:8081", "127.0.0.0/16", "[::1]:8081", "::1", "fd12:3456:789a::/48", "fd12:3456:789a:1::5", "::ffff:10.1.2.3",
  "8.8.8.0/24", "203.0.113.0/24", "tasks.internal", "tasks.internal:443", "metadata.example.com",
];

describe("wide allowlist entries (D38)", () => {
  it.each(WIDE)("judges %s wide: it %s", (entry, why) => {
    expect(wideEntryProblem(entry)).toContain(why);
  });

  it.each(NARROW)("takes %s", (entry) => {
    expect(wideEntryProblem(entry)).toBeNull();
  });

  it("moves the bound for private ranges, but never past a whole range", () => {
    expect(wideEntryProblem("10.1.0.0/16", { ipv4: 24, ipv6: 64 })).toBe("covers a /16 of the private range 10.0.0.0/8, wider than /24");
    expect(wideEntryProblem("10.1.2.0/24", { ipv4: 24, ipv6: 64 })).toBeNull();
    expect(wideEntryProblem("fd12:3456:789a::/48", { ipv4: 24, ipv6: 64 })).toContain("wider than /64");
    expect(wideEntryProblem("10.0.0.0/12", { ipv4: 12, ipv6: 48 })).toBeNull();
    expect(wideEntryProblem("10.0.0.0/8", { ipv4: 0, ipv6: 0 })).toContain("the whole of the private range 10.0.0.0/8");
    expect(wideEntryProblem("169.254.169.254", { ipv4: 0, ipv6: 0 })).toContain("link-local");
  });

  it("refuses them in createRunplane with an error that points at agents and at egress.wide", () => {
    let error: unknown;
    try {
      createRunplane({ storage: createMemoryStorage(), logger: silentLogger, egress: { allow: ["127.0.0.1:8081", "10.0.0.0/8"] } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toBeInstanceOf(RunplaneOptionsError);
    expect((error as RunplaneOptionsError).option).toBe("egress.allow[1]");
    const message = (error as Error).message;
    expect(message).toContain('createRunplane: option `egress.allow[1]` is wide: it covers the whole of the private range 10.0.0.0/8; got "10.0.0.0/8"');
    expect(message).toContain("agents (decision D34, private run tasks through agents)");
    expect(message).toContain("egress.wide: true");
  });

  it("takes them in createRunplane when egress.wide is true, and uses a narrower bound when given one", async () => {
    const wide = createRunplane({ storage: createMemoryStorage(), logger: silentLogger, egress: { allow: ["0.0.0.0/0", "169.254.169.254"], wide: true } });
    await wide.close();
    expect(() => createRunplane({ storage: createMemoryStorage(), logger: silentLogger, egress: { allow: ["10.1.0.0/16"], minPrefix: { ipv4: 24 } } })).toThrow(
      "is wide: it covers a /16 of the private range 10.0.0.0/8, wider than /24",
    );
    expect(() => createRunplane({ storage: createMemoryStorage(), logger: silentLogger, egress: { minPrefix: { ipv4: 33 } } })).toThrow("egress.minPrefix.ipv4");
    expect(() => createRunplane({ storage: createMemoryStorage(), logger: silentLogger, egress: { wide: "yes" as never } })).toThrow("egress.wide");
  });

  it("refuses them in createEgress unless wide is given", async () => {
    expect(() => createEgress({ allow: ["fd00::/8"] })).toThrow(TypeError);
    expect(() => createEgress({ allow: ["fd00::/8"] })).toThrow(/egress\.allow: "fd00::\/8" is wide: .*agents/);
    await createEgress({ allow: ["fd00::/8"], wide: true }).close();
    await createEgress({ allow: ["10.1.2.3:443"] }).close();
  });

  it("never lets a host-name entry carry a request to a metadata, link-local or unspecified address without the switch", () => {
    const strict = createEgressPolicy({ allow: ["metadata.google.internal", "tasks.internal"] });
    for (const ip of ["169.254.169.254", "fe80::1", "fd00:ec2::254", "100.100.100.200", "0.0.0.0", "::", "::ffff:169.254.169.254"]) {
      expect(strict.checkAddress(ip, "metadata.google.internal", 80), ip).toMatchObject({ ok: false });
    }
    expect(strict.checkAddress("10.1.2.3", "tasks.internal", 443)).toEqual({ ok: true });
    expect(strict.checkAddress("8.8.8.8", "metadata.google.internal", 80)).toEqual({ ok: true });
    const wide = createEgressPolicy({ allow: ["metadata.google.internal"], wide: true });
    expect(wide.checkAddress("169.254.169.254", "metadata.google.internal", 80)).toEqual({ ok: true });
  });
});
