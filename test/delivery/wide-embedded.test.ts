import { describe, expect, it } from "vitest";
import { isNeverWithoutWide, wideEntryProblem } from "../../src/delivery/wide-entries.js";

// Decision D38, found from outside: IPv6 forms that carry an IPv4 address other than ::ffff:a.b.c.d,
// 64:ff9b::/96 and 6to4 were judged by their IPv6 spelling only, so a hex spelling got past the
// wide check that the dotted one met, and a name resolving to them reached the metadata address.
describe("wide entries: IPv6 addresses that carry IPv4", () => {
  it.each([
    ["::a9fe:a9fe", "IPv4-compatible, hex"],
    ["::169.254.169.254", "IPv4-compatible, dotted"],
    ["::ffff:0:a9fe:a9fe", "IPv4-translated (RFC 2765)"],
    ["64:ff9b:1::a9fe:a9fe", "local-use NAT64 (RFC 8215)"],
    ["64:ff9b:1:a9fe:a900:fe00::", "local-use NAT64, /48 embedding"],
  ])("refuses a host name resolving to %s (%s) without the wide switch", (ip) => {
    expect(isNeverWithoutWide(ip)).toBe(true);
  });

  it("still lets a name resolve to the IPv6 loopback, a narrow entry of its own", () => {
    expect(isNeverWithoutWide("::1")).toBe(false);
    expect(wideEntryProblem("::1")).toBeNull();
    expect(wideEntryProblem("[::1]:8081")).toBeNull();
  });

  it.each([["::a00:0/104"], ["::10.0.0.0/104"], ["::ffff:0:a00:0/104"], ["::ffff:0:0:0/96"], ["64:ff9b:1::/48"], ["64:ff9b:1::/96"]])(
    "judges %s by the IPv4 network it carries, whatever its spelling",
    (entry) => {
      expect(wideEntryProblem(entry)).not.toBeNull();
    },
  );
});

// Found from outside: the agent accepts wide private ranges (that is its job), and its fc00::/7
// carried a request to the IPv6 metadata address fd00:ec2::254, which its guide says stays refused.
describe("a wide allowlist that keeps metadata and link-local refused (the agent's)", () => {
  it("refuses them inside a wide entry unless an entry names the exact address", async () => {
    const { createEgressPolicy } = await import("../../src/delivery/address-policy.js");
    const agent = createEgressPolicy({ allow: ["fc00::/7", "10.0.0.0/8", "169.254.0.0/16"], wide: true, keepNeverRefused: true });
    expect(agent.checkAddress("fd00:ec2::254", "fd00:ec2::254", 80)).toMatchObject({ ok: false });
    expect(agent.checkAddress("169.254.169.254", "169.254.169.254", 80)).toMatchObject({ ok: false });
    expect(agent.checkAddress("fd12:3456::1", "fd12:3456::1", 80)).toStrictEqual({ ok: true });
    expect(agent.checkAddress("10.1.2.3", "10.1.2.3", 80)).toStrictEqual({ ok: true });
    const named = createEgressPolicy({ allow: ["fc00::/7", "fd00:ec2::254/128"], wide: true, keepNeverRefused: true });
    expect(named.checkAddress("fd00:ec2::254", "fd00:ec2::254", 80)).toStrictEqual({ ok: true });
  });
});
