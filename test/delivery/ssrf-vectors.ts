/**
 * design/ssrf-vectors.md as data, shared by the egress tests and the end-to-end SSRF tests
 * (decision D15). Hosts are written as they appear in a URL.
 */

/** Literal addresses in every notation, refused without a connection. */
export const REFUSED_LITERALS = [
  "0.0.0.0", "0.1.2.3", "10.0.0.1", "100.64.0.1", "127.0.0.1", "127.255.255.254", "169.254.169.254",
  "172.16.0.1", "172.31.255.255", "192.0.0.1", "192.0.2.1", "192.88.99.1", "192.168.1.1", "198.18.0.1",
  "198.51.100.1", "203.0.113.1", "224.0.0.1", "240.0.0.1", "255.255.255.255",
  "0", "127.1", "0177.0.0.1", "017700000001", "2130706433", "0x7f000001", "0x7f.1",
  "[::]", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::ffff:169.254.169.254]", "[64:ff9b::7f00:1]",
  "[64:ff9b:1::1]", "[2002:7f00:1::]", "[fc00::1]", "[fd00::1]", "[fe80::1]", "[fec0::1]", "[ff02::1]",
  "[2001:db8::1]", "[100::1]", "[3fff::1]", "[5f00::1]",
];

/** Does not parse as a URL: refused as invalid. */
export const ZONE_ID_HOST = "[fe80::1%25eth0]";

/** Names refused before any resolution. */
export const REFUSED_NAMES = ["localhost", "localhost.", "foo.localhost", "intranet"];

/** Names refused for what they resolve to (with an injected resolver). */
export const REFUSED_RESOLUTIONS: Record<string, string[]> = {
  "loopback.example": ["127.0.0.1"],
  "v6-loopback.example": ["::1"],
  "unspecified.example": ["::"],
  "metadata.example": ["169.254.169.254"],
  "mixed.example": ["8.8.8.8", "10.0.0.1"],
};

/** Refused URL forms: schemes other than http(s), and userinfo. */
export const REFUSED_SCHEMES = ["file:///etc/passwd", "ftp://example.com/", "gopher://example.com/", "data:text/plain,x", "javascript:alert(1)"];

/** Public controls that must pass (with an injected public resolution, never really dialled). */
export const CONTROLS = ["1.1.1.1", "8.8.8.8", "[2606:4700::1111]", "[::ffff:8.8.8.8]"];
