import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildConnector } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createEgress,
  EgressError,
  type EgressConnector,
  type EgressOptions,
  type HttpRequest,
  type HttpTransport,
  type ResolvedAddress,
} from "../../src/delivery/egress.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { REFUSED_LITERALS } from "./ssrf-vectors.js";

// Decision D15 and design/ssrf-vectors.md, end to end through undici. The machine's rule holds
// here: only 127.0.0.1 is ever dialled. Names resolve through an injected table, and the injected
// connector sends every socket it is asked for to the loopback receiver while recording the
// address it was asked for, so even a broken guard could not reach a foreign address; a refused
// vector shows up as zero connector calls and zero receiver connections.

let receiver: LoopbackServer;
const transports: HttpTransport[] = [];

beforeEach(async () => {
  receiver = await startLoopbackServer();
});

afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
  await receiver.close();
});

/** Records what the egress asks to dial, then dials the receiver instead (plain TCP). */
function loopbackConnector() {
  const dialled: string[] = [];
  const dial = buildConnector({ timeout: 1_000 });
  const connector: EgressConnector = (opts, callback) => {
    dialled.push(opts.hostname);
    dial({ ...opts, protocol: "http:", hostname: "127.0.0.1", port: String(receiver.port) }, callback);
  };
  return { dialled, connector };
}

/** Answers from a table, like DNS ignoring case and a final dot; a list of answers is used one per call (for rebinding). */
function tableResolver(table: Record<string, string[] | string[][]>) {
  const asked: string[] = [];
  const calls = new Map<string, number>();
  const resolve = async (name: string): Promise<ResolvedAddress[]> => {
    asked.push(name);
    const hostname = name.toLowerCase().replace(/\.$/, "");
    const n = calls.get(hostname) ?? 0;
    calls.set(hostname, n + 1);
    const entry = table[hostname];
    if (entry === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    const answer = (Array.isArray(entry[0]) ? (entry as string[][])[Math.min(n, entry.length - 1)] : (entry as string[])) ?? [];
    return answer.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return { asked, resolve };
}

/** Real DNS is off limits on this machine: a test that forgets to inject a resolver fails loudly. */
const noRealDns = async (): Promise<ResolvedAddress[]> => {
  throw new Error("test forgot to inject a resolver");
};

function egress(options: EgressOptions = {}): HttpTransport {
  // The receiver stands in for a public integration: its answers are kept whole (D38).
  const transport = createEgress({ timeoutMs: 1_000, resolve: noRealDns, excerpts: "full", ...options });
  transports.push(transport);
  return transport;
}

const post = (url: string) => ({ url, headers: { "content-type": "application/json" }, body: "{}" });

async function refusal(promise: Promise<unknown>): Promise<EgressError> {
  const error = await promise.then(() => new Error("expected a refusal"), (err: unknown) => err);
  expect(error).toBeInstanceOf(EgressError);
  return error as EgressError;
}

describe("egress: the SSRF vectors", () => {
  const LITERALS = REFUSED_LITERALS;

  it.each(LITERALS)("refuses http and https to %s without a connection", async (host) => {
    const { dialled, connector } = loopbackConnector();
    const dns = tableResolver({});
    const transport = egress({ connector, resolve: dns.resolve });
    for (const scheme of ["http", "https"]) {
      const error = await refusal(transport.send(post(`${scheme}://${host}:${receiver.port}/hook`)));
      expect(error.code).toBe("refused-address");
    }
    expect(dialled).toEqual([]);
    expect(dns.asked).toEqual([]);
    expect(receiver.connections).toBe(0);
  });

  it("refuses a zone identifier as an invalid URL without a connection", async () => {
    const { dialled, connector } = loopbackConnector();
    const error = await refusal(egress({ connector }).send(post(`http://[fe80::1%25eth0]:${receiver.port}/`)));
    expect(error.code).toBe("refused-url");
    expect(dialled).toEqual([]);
    expect(receiver.connections).toBe(0);
  });

  it.each(["localhost", "localhost.", "foo.localhost", "intranet"])("refuses the name %s before resolving it", async (host) => {
    const { dialled, connector } = loopbackConnector();
    const dns = tableResolver({ [host]: ["127.0.0.1"], [host.replace(/\.$/, "")]: ["127.0.0.1"] });
    const transport = egress({ connector, resolve: dns.resolve });
    for (const scheme of ["http", "https"]) {
      expect((await refusal(transport.send(post(`${scheme}://${host}:${receiver.port}/`)))).code).toBe("refused-url");
    }
    expect(dns.asked).toEqual([]);
    expect(dialled).toEqual([]);
    expect(receiver.connections).toBe(0);
  });

  it.each([
    ["127.0.0.1", ["127.0.0.1"]],
    ["::1", ["::1"]],
    ["::", ["::"]],
    ["169.254.169.254", ["169.254.169.254"]],
    ["a public and a private address", ["8.8.8.8", "10.0.0.1"]],
    ["a private and a public address", ["10.0.0.1", "8.8.8.8"]],
  ])("refuses a name that resolves to %s without a connection", async (_label, addresses) => {
    const { dialled, connector } = loopbackConnector();
    const dns = tableResolver({ "hook.example": addresses });
    const transport = egress({ connector, resolve: dns.resolve });
    for (const scheme of ["http", "https"]) {
      const error = await refusal(transport.send(post(`${scheme}://hook.example:${receiver.port}/`)));
      expect(error.code).toBe("refused-address");
    }
    expect(dns.asked).toEqual(["hook.example", "hook.example"]);
    expect(dialled).toEqual([]);
    expect(receiver.connections).toBe(0);
  });

  it("connects a rebinding name only to the address it checked, and refuses the rebound answer", async () => {
    const { dialled, connector } = loopbackConnector();
    const dns = tableResolver({ "rebind.example": [["1.1.1.1"], ["127.0.0.1"]] });
    const transport = egress({ connector, resolve: dns.resolve });

    const first = await transport.send(post(`http://rebind.example:${receiver.port}/`));
    expect(first.status).toBe(200);
    expect(dialled).toEqual(["1.1.1.1"]);

    // The receiver closes every connection, so the next request needs a new one.
    await receiver.idle();
    const error = await refusal(transport.send(post(`http://rebind.example:${receiver.port}/`)));
    expect(error).toMatchObject({ code: "refused-address", reason: "loopback" });
    expect(dns.asked).toEqual(["rebind.example", "rebind.example"]);
    expect(dialled).toEqual(["1.1.1.1"]);
    expect(receiver.connections).toBe(1);
  });

  it.each(["file:///etc/passwd", "ftp://example.com/", "gopher://example.com/", "data:text/plain,x", "javascript:alert(1)"])(
    "refuses the URL %s without a connection",
    async (url) => {
      const { dialled, connector } = loopbackConnector();
      expect((await refusal(egress({ connector }).send(post(url)))).code).toBe("refused-url");
      expect(dialled).toEqual([]);
    },
  );

  it("refuses a URL with userinfo without resolving or connecting", async () => {
    const { dialled, connector } = loopbackConnector();
    const dns = tableResolver({ "example.com": ["8.8.8.8"] });
    const error = await refusal(egress({ connector, resolve: dns.resolve }).send(post(`http://a:b@example.com:${receiver.port}/`)));
    expect(error).toMatchObject({ code: "refused-url", reason: "userinfo" });
    expect(dns.asked).toEqual([]);
    expect(dialled).toEqual([]);
    expect(receiver.connections).toBe(0);
  });
});

describe("egress: the controls", () => {
  it.each(["1.1.1.1", "8.8.8.8", "[2606:4700::1111]", "[::ffff:8.8.8.8]"])(
    "dials the public literal %s (diverted to loopback by the test connector)",
    async (host) => {
      const { dialled, connector } = loopbackConnector();
      const res = await egress({ connector }).send(post(`http://${host}:${receiver.port}/`));
      expect(res.status).toBe(200);
      expect(dialled).toEqual([new URL(`http://${host}/`).hostname.replace(/^\[|\]$/g, "")]);
    },
  );

  it("dials a name with a public resolution at the address it resolved to", async () => {
    const { dialled, connector } = loopbackConnector();
    const dns = tableResolver({ "tasks.example": ["2606:4700::1111", "1.1.1.1"] });
    const res = await egress({ connector, resolve: dns.resolve }).send(post(`http://tasks.example:${receiver.port}/`));
    expect(res.status).toBe(200);
    expect(dialled).toEqual(["2606:4700::1111"]);
    expect(receiver.requests[0]?.headers.host).toBe(`tasks.example:${receiver.port}`);
  });
});

/** A throwaway self-signed certificate for `name`, made by the openssl CLI. */
function selfSigned(name: string): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), "egress-tls-"));
  try {
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
      "-subj", `/CN=${name}`, "-addext", `subjectAltName=DNS:${name}`,
      "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"),
    ], { stdio: "ignore" });
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("egress: HTTPS to a name", () => {
  const hasOpenssl = spawnSync("openssl", ["version"]).status === 0;
  // Locally a missing openssl CLI skips (and says why); in CI it fails: CI installs it (.ci/run).
  if (!hasOpenssl && process.env.CI) {
    it("has the openssl CLI to make its test certificate", () => {
      throw new Error("CI needs the openssl CLI (apt-get install -y openssl)");
    });
  } else if (!hasOpenssl) console.warn("egress HTTPS test skipped: the openssl CLI is missing (apt-get install -y openssl)");

  it.skipIf(!hasOpenssl)("dials the checked address yet verifies the certificate against the name (needs the openssl CLI)", async () => {
    const { key, cert } = selfSigned("tasks.example");
    const tlsReceiver = await startLoopbackServer(undefined, { tls: { key, cert } });
    try {
      const dialled: string[] = [];
      const dial = buildConnector({ ca: cert, timeout: 1_000 });
      const connector: EgressConnector = (opts, callback) => {
        dialled.push(opts.hostname);
        dial({ ...opts, hostname: "127.0.0.1", port: String(tlsReceiver.port) }, callback);
      };
      const dns = tableResolver({ "tasks.example": ["8.8.8.8"], "other.example": ["8.8.8.8"] });
      const transport = egress({ connector, resolve: dns.resolve });

      expect((await transport.send(post(`https://tasks.example:${tlsReceiver.port}/hook`))).status).toBe(200);
      expect(dialled).toEqual(["8.8.8.8"]);
      // Same address, a name the certificate does not cover: the check used the name, not the IP.
      const error = await refusal(transport.send(post(`https://other.example:${tlsReceiver.port}/hook`)));
      expect(error).toMatchObject({ code: "network", message: expect.stringContaining("ERR_TLS_CERT_ALTNAME_INVALID") });
    } finally {
      await tlsReceiver.close();
    }
  });
});

describe("egress: the allowlist", () => {
  it("lets 127.0.0.1/32 reach a loopback receiver, which records the exact request", async () => {
    const transport = egress({ allow: ["127.0.0.1/32"], userAgent: "runplane/test" });
    const res = await transport.send({
      url: receiver.url("/hook?x=1"),
      headers: { "Content-Type": "application/json", "X-SVC-Task-Signature": "abc123", "User-Agent": "spoofed", Host: "evil.test" },
      body: new TextEncoder().encode('{"a":1}'),
    });
    expect(res).toEqual({
      status: 200,
      headers: expect.objectContaining({ "content-length": "2", connection: "close" }),
      body: "ok",
      bodyTruncated: false,
    });
    const [req] = receiver.requests;
    expect(req?.raw.toString("latin1")).toMatch(/^POST \/hook\?x=1 HTTP\/1\.1\r\n/);
    expect(req?.headers).toMatchObject({
      "content-type": "application/json",
      "x-svc-task-signature": "abc123",
      "user-agent": "runplane/test",
      host: `127.0.0.1:${receiver.port}`,
      "content-length": "7",
    });
    expect(req?.body.toString()).toBe('{"a":1}');
    expect(receiver.connections).toBe(1);
  });

  it("still refuses 127.0.0.2 with 127.0.0.1/32 allowed", async () => {
    const { dialled, connector } = loopbackConnector();
    const error = await refusal(egress({ allow: ["127.0.0.1/32"], connector }).send(post(`http://127.0.0.2:${receiver.port}/`)));
    expect(error).toMatchObject({ code: "refused-address", reason: "loopback" });
    expect(dialled).toEqual([]);
    expect(receiver.connections).toBe(0);
  });

  it("lets a host-name entry reach exactly that name, whatever it resolves to", async () => {
    const dns = tableResolver({ "receiver.test": ["127.0.0.1"], "other.test": ["127.0.0.1"], "a.receiver.test": ["127.0.0.1"] });
    const transport = egress({ allow: ["receiver.test"], resolve: dns.resolve });
    expect((await transport.send(post(`http://RECEIVER.test.:${receiver.port}/`))).status).toBe(200);
    expect((await refusal(transport.send(post(`http://other.test:${receiver.port}/`)))).code).toBe("refused-address");
    expect((await refusal(transport.send(post(`http://a.receiver.test:${receiver.port}/`)))).code).toBe("refused-address");
    expect(receiver.connections).toBe(1);
  });
});

describe("egress: port-scoped allowlist entries", () => {
  /** Like loopbackConnector, but records the port the egress asked for too. */
  function recordingConnector() {
    const dialled: string[] = [];
    const dial = buildConnector({ timeout: 1_000 });
    const connector: EgressConnector = (opts, callback) => {
      dialled.push(`${opts.hostname}:${opts.port}`);
      dial({ ...opts, protocol: "http:", hostname: "127.0.0.1", port: String(receiver.port) }, callback);
    };
    return { dialled, connector };
  }

  it("reaches the allowed address on its port and refuses another port before opening a socket", async () => {
    const transport = egress({ allow: [`127.0.0.1:${receiver.port}`] });
    expect((await transport.send(post(receiver.url("/hook")))).status).toBe(200);
    const other = receiver.port === 65535 ? receiver.port - 1 : receiver.port + 1;
    const error = await refusal(transport.send(post(`http://127.0.0.1:${other}/hook`)));
    expect(error).toMatchObject({ code: "refused-address", reason: "loopback" });
    expect(receiver.connections).toBe(1);
  });

  it("checks the port where the socket connects: a name resolving to a port-scoped address on another port is refused", async () => {
    const { dialled, connector } = recordingConnector();
    const dns = tableResolver({ "tasks.example": ["127.0.0.1"] });
    const transport = egress({ allow: ["127.0.0.1:8081"], connector, resolve: dns.resolve });
    expect((await transport.send(post("http://tasks.example:8081/"))).status).toBe(200);
    expect(dialled).toEqual(["127.0.0.1:8081"]);
    for (const url of ["http://tasks.example:8082/", "http://tasks.example/", "https://tasks.example/"]) {
      expect((await refusal(transport.send(post(url)))).code).toBe("refused-address");
    }
    expect(dialled).toEqual(["127.0.0.1:8081"]);
    expect(receiver.connections).toBe(1);
  });

  it("counts the default port: a name entry on 80 admits http://name/ and refuses http://name:81/", async () => {
    const { dialled, connector } = recordingConnector();
    const dns = tableResolver({ "host.internal": ["10.0.0.1"] });
    const transport = egress({ allow: ["host.internal:80"], connector, resolve: dns.resolve });
    expect((await transport.send(post("http://host.internal/"))).status).toBe(200);
    expect((await refusal(transport.send(post("http://host.internal:81/")))).code).toBe("refused-address");
    expect(dialled).toEqual(["10.0.0.1:80"]);
    expect(receiver.connections).toBe(1);
  });

  it("admits the bracketed IPv6 entry on its port only", async () => {
    const { dialled, connector } = recordingConnector();
    const transport = egress({ allow: ["[::1]:8081"], connector });
    expect((await transport.send(post("http://[::1]:8081/"))).status).toBe(200);
    expect((await refusal(transport.send(post("http://[::1]:8082/")))).code).toBe("refused-address");
    expect(dialled).toEqual(["::1:8081"]);
  });
});

describe("egress: responses", () => {
  const allowLoopback = { allow: ["127.0.0.1/32"] };

  it.each([301, 302, 307, 308])("returns a %i as the status and never contacts the Location", async (status) => {
    const target = await startLoopbackServer();
    try {
      receiver.setScript({ kind: "respond", status, headers: { location: target.url("/stolen") } });
      const res = await egress(allowLoopback).send(post(receiver.url("/")));
      expect(res.status).toBe(status);
      expect(res.headers.location).toBe(target.url("/stolen"));
      expect(target.connections).toBe(0);
    } finally {
      await target.close();
    }
  });

  it("cuts a 100 MB body at 64 KiB and drops the connection instead of reading on", async () => {
    receiver.setScript({ kind: "huge", status: 200, bytes: 100 * 1024 * 1024 });
    const res = await egress({ ...allowLoopback, timeoutMs: 5_000 }).send(post(receiver.url("/")));
    expect(res.body.length).toBe(64 * 1024);
    expect(res.bodyTruncated).toBe(true);
    await receiver.idle();
    // Socket buffers let the sender get a little ahead; nowhere near the 100 MB it announced.
    expect(receiver.bodyBytesSent).toBeLessThan(16 * 1024 * 1024);
  });

  it("keeps a body of exactly maxBodyBytes whole and marks a longer one truncated", async () => {
    receiver.setScript({ kind: "respond", status: 200, body: "hello" });
    expect(await egress({ ...allowLoopback, maxBodyBytes: 5 }).send(post(receiver.url("/")))).toMatchObject({ body: "hello", bodyTruncated: false });
    expect(await egress({ ...allowLoopback, maxBodyBytes: 4 }).send(post(receiver.url("/")))).toMatchObject({ body: "hell", bodyTruncated: true });
  });

  it("returns error statuses with their body instead of throwing", async () => {
    receiver.setScript({ kind: "respond", status: 503, body: "busy" });
    expect(await egress(allowLoopback).send(post(receiver.url("/")))).toMatchObject({ status: 503, body: "busy" });
  });
});

describe("egress: failures", () => {
  const allowLoopback = { allow: ["127.0.0.1/32"], timeoutMs: 200 };

  // No stopwatch: the receiver never finishes on its own, the error names the attempt's own budget
  // (not one of undici's backstops), and the receiver sees the connection dropped.
  it("times out a receiver that never answers", async () => {
    receiver.setScript({ kind: "hang" });
    const error = await refusal(egress(allowLoopback).send(post(receiver.url("/"))));
    expect(error.code).toBe("timeout");
    expect(error.message).toBe("request timed out after 200 ms");
    await receiver.idle();
  });

  it("times out a body that keeps dribbling, since the budget covers the whole attempt", async () => {
    // A chunk every 20 ms for about 6 hours: only a budget for the whole attempt ends it.
    receiver.setScript({ kind: "dribble", status: 200, chunk: "x", intervalMs: 20, count: 1_000_000 });
    const error = await refusal(egress(allowLoopback).send(post(receiver.url("/"))));
    expect(error.code).toBe("timeout");
    expect(error.message).toBe("request timed out after 200 ms");
    await receiver.idle();
  });

  it("times out a resolver that never answers", async () => {
    const resolve = () => new Promise<ResolvedAddress[]>(() => undefined);
    const error = await refusal(egress({ timeoutMs: 200, resolve }).send(post("http://slow.example/")));
    expect(error.code).toBe("timeout");
  });

  it("reports a refused connection as a network error", async () => {
    const closed = await startLoopbackServer();
    await closed.close();
    const error = await refusal(egress(allowLoopback).send(post(closed.url("/"))));
    expect(error.code).toBe("network");
    expect(error.message).toContain("ECONNREFUSED");
  });

  it("reports a reset connection as a network error", async () => {
    receiver.setScript({ kind: "reset" });
    expect((await refusal(egress(allowLoopback).send(post(receiver.url("/"))))).code).toBe("network");
  });

  it("reports a failed or empty resolution as a DNS failure", async () => {
    const dns = tableResolver({ "empty.example": [] });
    const transport = egress({ resolve: dns.resolve });
    expect((await refusal(transport.send(post("http://missing.example/")))).code).toBe("dns-failure");
    expect((await refusal(transport.send(post("http://empty.example/")))).code).toBe("dns-failure");
  });

  it("never puts the URL, headers or body of a request into an error message", async () => {
    receiver.setScript({ kind: "reset" });
    const secret = "s3cr3t-token";
    const transport = egress(allowLoopback);
    const attempts: HttpRequest[] = [
      { url: `${receiver.url("/")}?token=${secret}`, headers: { authorization: `Bearer ${secret}` }, body: secret },
      { url: `http://${secret}.localhost/`, headers: { authorization: `Bearer ${secret}` }, body: secret },
      { url: `http://user:${secret}@example.com/`, headers: {}, body: secret },
    ];
    for (const attempt of attempts) {
      const error = await refusal(transport.send(attempt));
      expect(`${error.message} ${String(error.reason)} ${error.stack}`).not.toContain(secret);
    }
  });

  it("refuses to send once closed", async () => {
    const transport = createEgress({ ...allowLoopback, resolve: noRealDns });
    await transport.close();
    expect((await refusal(transport.send(post(receiver.url("/"))))).code).toBe("network");
    expect(receiver.connections).toBe(0);
  });
});
