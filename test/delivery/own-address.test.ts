import { describe, expect, it } from "vitest";
import { createEgressPolicy } from "../../src/delivery/address-policy.js";
import { ownInterfaceAddresses } from "../../src/delivery/egress.js";

// Found from outside: the host's own public address counted as public, so a run task pointed at it
// reached every service listening on 0.0.0.0 of the host itself, and the 422 quoted their answers.
describe("egress: the host's own addresses", () => {
  const own = () => new Set(["11.22.33.44", "2a00:1450::7"]);

  it("refuses a public address of one of the host's own interfaces, literal or resolved", () => {
    const policy = createEgressPolicy({ ownAddresses: own });
    expect(policy.checkUrl("http://11.22.33.44:6379/")).toMatchObject({ ok: false, code: "refused-address", reason: "ownAddress" });
    expect(policy.checkAddress("11.22.33.44", "scanner.example", 443)).toStrictEqual({ ok: false, reason: "ownAddress" });
    expect(policy.checkAddress("::ffff:11.22.33.44", "scanner.example", 443)).toStrictEqual({ ok: false, reason: "ownAddress" });
    expect(policy.checkAddress("11.22.33.45", "scanner.example", 443)).toStrictEqual({ ok: true });
    // Found from outside: NAT64 and 6to4 spellings of the host's own IPv4 address were dialled.
    expect(policy.checkAddress("64:ff9b::b16:212c", "scanner.example", 443)).toStrictEqual({ ok: false, reason: "ownAddress" });
    expect(policy.checkAddress("2002:b16:212c::1", "scanner.example", 443)).toStrictEqual({ ok: false, reason: "ownAddress" });
  });

  it("admits it when an allowlist entry names it", () => {
    const policy = createEgressPolicy({ ownAddresses: own, allow: ["11.22.33.44:8443"] });
    expect(policy.checkAddress("11.22.33.44", "11.22.33.44", 8443)).toStrictEqual({ ok: true });
    expect(policy.checkAddress("11.22.33.44", "11.22.33.44", 6379)).toStrictEqual({ ok: false, reason: "ownAddress" });
  });

  it("reads the interfaces of this machine, loopback included", () => {
    expect(ownInterfaceAddresses().has("127.0.0.1")).toBe(true);
  });
});
