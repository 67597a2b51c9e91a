import { describe, expect, it } from "vitest";
import { createEgress, createRunplane } from "../../src/index.js";
import { portlessLoopback, wideTogether } from "../../src/delivery/wide-allowlist.js";
import { createMemoryStorage } from "../../adapters/memory/index.js";

// decision D43: the allowlist is judged as a whole: entries narrow enough one by one (D38) may
// together admit a whole private range, or more private addresses than one entry may.

const sixteens = Array.from({ length: 256 }, (_, i) => `10.${i}.0.0/16`);

describe("an egress allowlist judged as a whole (D43)", () => {
  it("finds a private range covered by entries each narrow enough", () => {
    expect(wideTogether(sixteens)).toStrictEqual([{ entries: sixteens, problem: "together cover the whole of the private range 10.0.0.0/8" }]);
    expect(wideTogether(["192.168.0.0/17", "192.168.128.0/17", "tasks.internal:443"])).toStrictEqual([
      { entries: ["192.168.0.0/17", "192.168.128.0/17"], problem: "together cover the whole of the private range 192.168.0.0/16" },
    ]);
  });

  it("counts the private addresses admitted in all, against one entry of the bound", () => {
    expect(wideTogether(["10.1.0.0/16", "172.16.5.0/24", "8.8.8.0/24"])).toStrictEqual([
      { entries: ["10.1.0.0/16", "172.16.5.0/24"], problem: "together admit 65792 private IPv4 addresses, more than one /16 (65536)" },
    ]);
    expect(wideTogether(["fd00:1::/48", "fd00:2::/48"])[0]!.problem).toMatch(/^together admit \d+ private IPv6 addresses, more than one \/48/);
    // Overlapping entries count once; public addresses and names are not counted.
    expect(wideTogether(["10.1.0.0/16", "10.1.2.0/24", "10.1.2.3:443", "8.0.0.0/8", "tasks.internal"])).toStrictEqual([]);
    expect(wideTogether(["10.1.2.0/24", "192.168.1.10", "127.0.0.1:8081", "[::1]:8081", "fd00:1:2::/48"])).toStrictEqual([]);
    expect(wideTogether(["10.1.0.0/16", "10.2.0.0/16"], { ipv4: 15, ipv6: 48 })).toStrictEqual([]);
    // Loopback is judged by its ports, not counted: the integration beside the server and a /16.
    expect(wideTogether(["10.1.0.0/16", "127.0.0.1:8081", "127.0.0.2"])).toStrictEqual([]);
  });

  it("leaves entries wide on their own to the entry check (D38)", () => {
    expect(wideTogether(["10.0.0.0/8", "192.168.1.0/24"])).toStrictEqual([]);
  });

  it("calls a loopback address or name without a port portless, one with a port not", () => {
    for (const entry of ["127.0.0.1", "127.0.0.1/32", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST.", "api.localhost", "::ffff:127.0.0.1", "[::ffff:127.0.0.1]", "::ffff:7f00:1", "64:ff9b::7f00:1", "2002:7f00:1::"]) expect(portlessLoopback(entry), entry).toBe(true);
    for (const entry of ["127.0.0.1:8081", "[::1]:8081", "localhost:9000", "10.1.2.3", "tasks.internal", "not an entry", "[::ffff:127.0.0.1]:8081", "::ffff:10.1.2.3"]) expect(portlessLoopback(entry), entry).toBe(false);
  });

  it("is refused by createRunplane and createEgress unless egress.wide is true", async () => {
    const storage = createMemoryStorage();
    expect(() => createRunplane({ storage, egress: { allow: ["192.168.0.0/17", "192.168.128.0/17"] } })).toThrow(
      'option `egress.allow` is wide: its entries "192.168.0.0/17", "192.168.128.0/17" together cover the whole of the private range 192.168.0.0/16',
    );
    expect(() => createEgress({ allow: sixteens })).toThrow('egress.allow: "10.0.0.0/16", "10.1.0.0/16", "10.2.0.0/16", "10.3.0.0/16" and 252 more together cover the whole of the private range 10.0.0.0/8: wide together');
    const accepted = createRunplane({ storage, egress: { allow: ["192.168.0.0/17", "192.168.128.0/17"], wide: true } });
    await accepted.close();
    await createEgress({ allow: sixteens, wide: true }).close();
  });
});
