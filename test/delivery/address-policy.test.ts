import { describe, expect, it } from "vitest";
import { classifyAddress, createEgressPolicy } from "../../src/delivery/address-policy.js";

// design/ssrf-vectors.md, decision D15. Pure functions: nothing here opens a socket.
const REFUSED_V4 = [
  "0.0.0.0", "0.1.2.3", "10.0.0.1", "100.64.0.1", "127.0.0.1", "127.255.255.254", "169.254.169.254",
  "172.16.0.1", "172.31.255.255", "192.0.0.1", "192.0.2.1", "192.88.99.1", "192.168.1.1", "198.18.0.1",
  "198.51.100.1", "203.0.113.1", "224.0.0.1", "240.0.0.1", "255.255.255.255",
];
const LOOPBACK_NOTATIONS = ["0", "127.1", "0177.0.0.1", "017700000001", "2130706433", "0x7f000001", "0x7f.1"];
const REFUSED_V6 = [
  "[::]", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::ffff:169.254.169.254]", "[64:ff9b::7f00:1]",
  "[64:ff9b:1::1]", "[2002:7f00:1::]", "[fc00::1]", "[fd00::1]", "[fe80::1]", "[fec0::1]", "[ff02::1]",
  "[2001:db8::1]", "[100::1]", "[3fff::1]", "[5f00::1]",
];
const CONTROLS = ["1.1.1.1", "8.8.8.8", "[2606:4700::1111]", "[::ffff:8.8.8.8]"];

describe("address classification", () => {
  it.each(REFUSED_V4)("refuses the IPv4 address %s", (ip) => {
    expect(classifyAddress(ip)).not.toBe("public");
  });

  it.each(REFUSED_V6.map((host) => host.slice(1, -1)))("refuses the IPv6 address %s", (ip) => {
    expect(classifyAddress(ip)).not.toBe("public");
  });

  it.each(["1.1.1.1", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8", "::ffff:808:808"])("passes the public address %s", (ip) => {
    expect(classifyAddress(ip)).toBe("public");
  });

  it("names the range that made an address unusable", () => {
    expect(classifyAddress("10.0.0.1")).toBe("private");
    expect(classifyAddress("169.254.169.254")).toBe("linkLocal");
    expect(classifyAddress("100.64.0.1")).toBe("carrierGradeNat");
    expect(classifyAddress("::1")).toBe("loopback");
    expect(classifyAddress("5f00::1")).toBe("segmentRouting");
    expect(classifyAddress("3fff::1")).toBe("reserved");
    expect(classifyAddress("100::1")).toBe("discard");
  });

  it("judges an IPv4-mapped address by the IPv4 address it carries", () => {
    expect(classifyAddress("::ffff:7f00:1")).toBe("loopback");
    expect(classifyAddress("::ffff:a9fe:a9fe")).toBe("linkLocal");
  });

  it("judges NAT64 and 6to4 addresses by the IPv4 address they embed", () => {
    expect(classifyAddress("64:ff9b::7f00:1")).toBe("loopback");
    expect(classifyAddress("64:ff9b::a00:1")).toBe("private");
    expect(classifyAddress("64:ff9b::808:808")).toBe("public");
    expect(classifyAddress("2002:7f00:1::")).toBe("loopback");
    expect(classifyAddress("2002:c0a8:101::1")).toBe("private");
    expect(classifyAddress("2002:808:808::1")).toBe("public");
  });

  it("refuses the local-use NAT64 prefix, Teredo and addresses outside global unicast", () => {
    expect(classifyAddress("64:ff9b:1::808:808")).toBe("rfc6052");
    expect(classifyAddress("2001:0:4136:e378:8000:63bf:3fff:fdd2")).toBe("teredo");
    expect(classifyAddress("::7f00:1")).toBe("notGlobalUnicast");
    expect(classifyAddress("4000::1")).toBe("notGlobalUnicast");
  });

  it("refuses a link-local address with a zone", () => {
    expect(classifyAddress("fe80::1%eth0")).toBe("linkLocal");
  });

  it("treats loose IPv4 spellings as invalid rather than guessing what they mean", () => {
    for (const loose of ["127.1", "0x7f.1", "2130706433", "017700000001", "", "example.com"]) {
      expect(classifyAddress(loose)).toBe("invalid");
    }
  });
});

describe("egress policy: URLs", () => {
  const policy = createEgressPolicy();

  it.each([...REFUSED_V4, ...LOOPBACK_NOTATIONS, ...REFUSED_V6])("refuses http and https to the literal host %s", (host) => {
    for (const scheme of ["http", "https"]) {
      expect(policy.checkUrl(`${scheme}://${host}/`)).toMatchObject({ ok: false, code: "refused-address" });
    }
  });

  it("classifies loose IPv4 notations after new URL() has canonicalized them", () => {
    expect(policy.checkUrl("http://0x7f.1/")).toEqual({ ok: false, code: "refused-address", reason: "loopback" });
    expect(policy.checkUrl("http://0/")).toEqual({ ok: false, code: "refused-address", reason: "unspecified" });
  });

  it("refuses a zone identifier in the host as an invalid URL", () => {
    expect(policy.checkUrl("http://[fe80::1%25eth0]/")).toEqual({ ok: false, code: "refused-url", reason: "invalid-url" });
  });

  it.each(["localhost", "localhost.", "LocalHost", "foo.localhost", "foo.localhost.", "intranet", "intranet."])(
    "refuses the host name %s",
    (host) => {
      expect(policy.checkUrl(`https://${host}/`)).toMatchObject({ ok: false, code: "refused-url" });
    },
  );

  it.each(["file:///etc/passwd", "ftp://example.com/", "gopher://example.com/", "data:text/plain,hi", "javascript:alert(1)", "ws://example.com/"])(
    "refuses the scheme of %s",
    (url) => {
      expect(policy.checkUrl(url)).toEqual({ ok: false, code: "refused-url", reason: "scheme" });
    },
  );

  it("refuses URLs with userinfo, a password alone included", () => {
    expect(policy.checkUrl("http://a:b@example.com/")).toEqual({ ok: false, code: "refused-url", reason: "userinfo" });
    expect(policy.checkUrl("https://token@example.com/")).toEqual({ ok: false, code: "refused-url", reason: "userinfo" });
    expect(policy.checkUrl("https://:secret@example.com/")).toEqual({ ok: false, code: "refused-url", reason: "userinfo" });
  });

  it("refuses strings that are not URLs", () => {
    expect(policy.checkUrl("example.com/hook")).toEqual({ ok: false, code: "refused-url", reason: "invalid-url" });
  });

  it.each(CONTROLS)("passes the public control %s", (host) => {
    expect(policy.checkUrl(`https://${host}/hook`)).toMatchObject({ ok: true });
  });

  it("passes a multi-label name, leaving its addresses to the connect-time check", () => {
    const check = policy.checkUrl("https://Tasks.Example.COM./hook?x=1");
    expect(check).toMatchObject({ ok: true, hostname: "tasks.example.com." });
  });
});

describe("egress policy: addresses and the allowlist", () => {
  it("passes public addresses and refuses the rest by default", () => {
    const policy = createEgressPolicy();
    expect(policy.checkAddress("8.8.8.8", "dns.example")).toEqual({ ok: true });
    expect(policy.checkAddress("10.0.0.1", "db.example")).toEqual({ ok: false, reason: "private" });
    expect(policy.checkAddress("not-an-ip", "db.example")).toEqual({ ok: false, reason: "invalid" });
  });

  it("lets a CIDR entry through and nothing next to it", () => {
    const policy = createEgressPolicy({ allow: ["127.0.0.1/32"] });
    expect(policy.checkUrl("http://127.0.0.1:8080/")).toMatchObject({ ok: true });
    expect(policy.checkUrl("http://127.0.0.2:8080/")).toMatchObject({ ok: false, code: "refused-address" });
    expect(policy.checkAddress("127.0.0.1", "receiver.test")).toEqual({ ok: true });
    expect(policy.checkAddress("127.0.0.2", "receiver.test")).toEqual({ ok: false, reason: "loopback" });
  });

  it("matches an IPv4 CIDR entry against the IPv4-mapped form of the same address", () => {
    const policy = createEgressPolicy({ allow: ["10.1.0.0/16"] });
    expect(policy.checkAddress("::ffff:10.1.2.3", "x.test")).toEqual({ ok: true });
    expect(policy.checkAddress("::ffff:10.2.0.1", "x.test")).toEqual({ ok: false, reason: "private" });
  });

  it("accepts IPv6 CIDRs and bare addresses as single-address entries", () => {
    const policy = createEgressPolicy({ allow: ["fd00:1::/32", "::1", "192.168.1.10"] });
    expect(policy.checkAddress("fd00:1::5", "x.test")).toEqual({ ok: true });
    expect(policy.checkAddress("fd00:2::5", "x.test")).toMatchObject({ ok: false });
    expect(policy.checkAddress("::1", "x.test")).toEqual({ ok: true });
    expect(policy.checkAddress("192.168.1.10", "x.test")).toEqual({ ok: true });
    expect(policy.checkAddress("192.168.1.11", "x.test")).toMatchObject({ ok: false });
  });

  it("admits exactly the one address of an IPv6 address entry, bare or bracketed, never its /64", () => {
    const policy = createEgressPolicy({ allow: ["fd00:1:2:3::10", "[fd00:4:5:6::10]", "[fd00:7:8:9::10]:8443"] });
    expect(policy.checkAddress("fd00:1:2:3::10", "x.test")).toEqual({ ok: true });
    expect(policy.checkAddress("fd00:4:5:6::10", "x.test")).toEqual({ ok: true });
    expect(policy.checkAddress("fd00:7:8:9::10", "x.test", 8443)).toEqual({ ok: true });
    for (const [prefix, port] of [["fd00:1:2:3", 443], ["fd00:4:5:6", 443], ["fd00:7:8:9", 8443]] as const) {
      for (const neighbour of ["::11", "::1", ":ffff:ffff:ffff:ffff"]) {
        expect(policy.checkAddress(`${prefix}${neighbour}`, "x.test", port), `${prefix}${neighbour}`).toEqual({ ok: false, reason: "uniqueLocal" });
      }
    }
  });

  it("matches IPv6 prefixes longer than /32 bit by bit, and trims entries", () => {
    const policy = createEgressPolicy({ allow: [" fd00:1:2:3::/64 ", "fd00:9::/127", "\t10.9.0.0/24\n"] });
    expect(policy.checkAddress("fd00:1:2:3::ffff", "x.test")).toEqual({ ok: true });
    expect(policy.checkAddress("fd00:1:2:4::1", "x.test")).toMatchObject({ ok: false });
    expect(policy.checkAddress("fd00:9::1", "x.test")).toEqual({ ok: true });
    expect(policy.checkAddress("fd00:9::2", "x.test")).toMatchObject({ ok: false });
    expect(policy.checkAddress("10.9.0.200", "x.test")).toEqual({ ok: true });
    expect(policy.checkAddress("10.9.1.1", "x.test")).toMatchObject({ ok: false });
  });

  it("trusts a host-name entry for exactly that name, whatever it resolves to", () => {
    const policy = createEgressPolicy({ allow: ["Receiver.Test."] });
    expect(policy.checkAddress("127.0.0.1", "receiver.test")).toEqual({ ok: true });
    expect(policy.checkAddress("10.0.0.1", "RECEIVER.TEST.")).toEqual({ ok: true });
    expect(policy.checkAddress("127.0.0.1", "other.test")).toMatchObject({ ok: false });
    expect(policy.checkAddress("127.0.0.1", "a.receiver.test")).toMatchObject({ ok: false });
  });

  it("lets a host-name entry admit a single-label name or localhost", () => {
    const policy = createEgressPolicy({ allow: ["intranet", "localhost"] });
    expect(policy.checkUrl("http://intranet/")).toMatchObject({ ok: true });
    expect(policy.checkUrl("http://localhost./")).toMatchObject({ ok: true });
    expect(policy.checkUrl("http://foo.localhost/")).toMatchObject({ ok: false, reason: "localhost" });
  });

  it("rejects allowlist entries that are neither a CIDR nor a host name", () => {
    for (const entry of ["10.0.0.0/33", "::/129", "10.1", "0x7f.1", "http://x.test/", "a@b.test", "x.test/24", ""]) {
      expect(() => createEgressPolicy({ allow: [entry] }), entry).toThrow(TypeError);
    }
  });

  // An entry may name a port; it then admits that address or name on that port only.
  it("lets a port-scoped IPv4 entry admit its port and refuse another port of the same address", () => {
    const policy = createEgressPolicy({ allow: ["127.0.0.1:8081"] });
    expect(policy.checkUrl("http://127.0.0.1:8081/hook")).toMatchObject({ ok: true });
    expect(policy.checkUrl("http://127.0.0.1:8082/hook")).toMatchObject({ ok: false, code: "refused-address", reason: "loopback" });
    expect(policy.checkUrl("http://127.0.0.1/hook")).toMatchObject({ ok: false, code: "refused-address" });
    expect(policy.checkAddress("127.0.0.1", "127.0.0.1", 8081)).toEqual({ ok: true });
    expect(policy.checkAddress("::ffff:127.0.0.1", "x.test", 8081)).toEqual({ ok: true });
    expect(policy.checkAddress("127.0.0.1", "127.0.0.1", 22)).toEqual({ ok: false, reason: "loopback" });
    // Without a port nothing port-scoped matches.
    expect(policy.checkAddress("127.0.0.1", "127.0.0.1")).toEqual({ ok: false, reason: "loopback" });
    expect(policy.checkAddress("127.0.0.2", "127.0.0.2", 8081)).toEqual({ ok: false, reason: "loopback" });
  });

  it("lets a port-scoped IPv6 entry in bracket form admit only its port", () => {
    const policy = createEgressPolicy({ allow: ["[::1]:8081"] });
    expect(policy.checkUrl("http://[::1]:8081/")).toMatchObject({ ok: true });
    expect(policy.checkUrl("http://[::1]:8080/")).toMatchObject({ ok: false, code: "refused-address", reason: "loopback" });
    expect(policy.checkAddress("::1", "x.test", 8081)).toEqual({ ok: true });
    expect(policy.checkAddress("::1", "x.test", 80)).toEqual({ ok: false, reason: "loopback" });
  });

  it("treats a bracketed IPv6 address without a port as a bare IP (any port)", () => {
    const policy = createEgressPolicy({ allow: ["[::1]"] });
    expect(policy.checkUrl("http://[::1]:8080/")).toMatchObject({ ok: true });
    expect(policy.checkUrl("https://[::1]/")).toMatchObject({ ok: true });
  });

  it("lets a port-scoped name entry admit that name on that port only, default ports included", () => {
    const policy = createEgressPolicy({ allow: ["host.internal:443", "intranet:8443"] });
    expect(policy.checkUrl("https://host.internal/")).toMatchObject({ ok: true });
    expect(policy.checkUrl("http://host.internal:443/")).toMatchObject({ ok: true });
    expect(policy.checkAddress("10.0.0.1", "host.internal", 443)).toEqual({ ok: true });
    expect(policy.checkAddress("10.0.0.1", "HOST.internal.", 443)).toEqual({ ok: true });
    // http://host.internal/ is port 80: the name is not trusted there, its address is judged.
    expect(policy.checkUrl("http://host.internal/")).toMatchObject({ ok: true });
    expect(policy.checkAddress("10.0.0.1", "host.internal", 80)).toEqual({ ok: false, reason: "private" });
    expect(policy.checkAddress("10.0.0.1", "host.internal")).toEqual({ ok: false, reason: "private" });
    expect(policy.checkUrl("http://intranet:8443/")).toMatchObject({ ok: true });
    expect(policy.checkUrl("http://intranet/")).toMatchObject({ ok: false, reason: "single-label" });
  });

  it("keeps entries without a port valid for any port", () => {
    const policy = createEgressPolicy({ allow: ["127.0.0.0/8", "receiver.test"] });
    expect(policy.checkAddress("127.0.0.5", "x.test", 1)).toEqual({ ok: true });
    expect(policy.checkAddress("127.0.0.5", "x.test", 65535)).toEqual({ ok: true });
    expect(policy.checkAddress("10.0.0.1", "receiver.test", 9)).toEqual({ ok: true });
  });

  it("rejects invalid ports and port entries without a host at configuration", () => {
    for (const entry of ["127.0.0.1:0", ":80", "127.0.0.1:99999", "127.0.0.1:65536", "127.0.0.1:", "127.0.0.1:8o", "[::1]:0", "[::1]:", "[10.0.0.1]:80", "[x.test]:80", "x.test:0", "x.test:-1", "10.0.0.0/8:80", "10.1:80"]) {
      expect(() => createEgressPolicy({ allow: [entry] }), entry).toThrow(TypeError);
    }
  });
});
