import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { createReachLedger } from "../../src/delivery/guarded-connector.js";

// Decision D38: an answer's body is withheld when its origin was reached at a non-public address.
// Which pooled socket carried the answer is unknown, so the ledger must not forget an origin just
// because the socket closed (a server answering with `Connection: close` closes it right after the
// last byte, and the close may be handled before the answer is judged).
describe("reach ledger", () => {
  const socket = () => new EventEmitter() as EventEmitter & { once(event: "close", listener: () => void): unknown };

  it("counts an origin as reached through the allowlist while its socket is open and after it closed", async () => {
    let now = 1_000;
    const ledger = createReachLedger(() => now);
    const s = socket();
    ledger.opened("http://10.1.2.3:80", s);
    expect(ledger.throughAllowlist("http://10.1.2.3:80")).toBe(true);
    s.emit("close");
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(ledger.throughAllowlist("http://10.1.2.3:80")).toBe(true);
    now += 59_000;
    expect(ledger.throughAllowlist("http://10.1.2.3:80")).toBe(true);
    now += 2_000;
    expect(ledger.throughAllowlist("http://10.1.2.3:80")).toBe(false);
    expect(ledger.throughAllowlist("http://scanner.example:443")).toBe(false);
  });
});
