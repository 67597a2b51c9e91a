import { describe, expect, it } from "vitest";
import type { DeliveryAttemptRecord } from "../../src/schemas/delivery-attempts.js";
import type { DeliveryStatus } from "../../src/services/delivery-status.js";
import { deliveryState, type DeliveryModel } from "../../src/results-page/delivery.js";
import { deliverySentence, waitText } from "../../src/results-page/delivery-words.js";

// decision D31: the sentence of each failing state, from the stored facts alone (pure).

const NOW = "2026-01-01T12:00:00.000Z";
const status = (over: Partial<DeliveryStatus>): DeliveryStatus => ({
  now: NOW,
  resultStatus: "pending",
  deadlineAt: "2026-01-01T12:05:00.000Z",
  attempts: 3,
  nextAt: "2026-01-01T12:00:04.000Z",
  underWay: false,
  delivered: false,
  lastError: "the connection failed (ECONNREFUSED)",
  ...over,
});
const failed: DeliveryAttemptRecord = {
  id: "tda-1", taskResultId: "taskrs-1", deliveryId: "dlv-1", number: 3, startedAt: "2026-01-01T11:59:58.000Z", durationMs: 12,
  outcome: "failed", status: null, errorCode: "ECONNREFUSED", detail: "the connection failed (ECONNREFUSED)", excerpt: null, excerptTruncated: false,
};
const sentence = (s: DeliveryStatus, attempts: DeliveryAttemptRecord[] = [failed]): string => {
  const state = deliveryState(s);
  if (!state) return "(none)";
  const model: DeliveryModel = { state, now: s.now, attempts, total: attempts.length, lastError: s.lastError, noAgent: false };
  return deliverySentence(model).html.replace(/<[^>]+>/g, "");
};

describe("the words of a failing integration", () => {
  it("says nothing of a request not sent yet, on its first attempt, or accepted", () => {
    expect(sentence(status({ deadlineAt: null, attempts: 0, nextAt: "2026-01-01T12:00:00.000Z" }))).toBe("(none)");
    expect(sentence(status({ attempts: 0, underWay: true }))).toBe("(none)");
    expect(sentence(status({ resultStatus: "running", delivered: true, nextAt: null }))).toBe("(none)");
    expect(sentence(status({ resultStatus: "passed" }))).toBe("(none)");
  });

  it("words a connection failure, an attempt under way, and a next try that is due", () => {
    expect(sentence(status({}))).toMatch(/^Retrying: attempt 3 of at most \d+, last try: the connection failed \(ECONNREFUSED\), next try in 4 s, gives up at 12:05:00 UTC\.$/);
    expect(sentence(status({ underWay: true }))).toMatch(/^Retrying: attempt 4 of at most \d+ is under way, last try: the connection .*, gives up at 12:05:00 UTC\.$/);
    expect(sentence(status({ nextAt: "2026-01-01T11:59:59.000Z" }))).toContain(", next try due now,");
    expect(sentence(status({}), [])).toContain(", last error: the connection failed (ECONNREFUSED),");
  });

  it("says when no attempt is left before the deadline, and what an errored result means", () => {
    expect(sentence(status({ nextAt: null }))).toBe(
      "Not delivered: attempt 3 was the last one before the deadline, last try: the connection failed (ECONNREFUSED); the result becomes unreachable at 12:05:00 UTC.",
    );
    expect(sentence(status({ resultStatus: "errored", delivered: true, nextAt: null }))).toBe(
      "Errored: the integration accepted the request but reported no final result before the deadline, 3 attempts made, last try: the connection failed (ECONNREFUSED).",
    );
  });

  it("gives waits in seconds, minutes and hours, rounded up", () => {
    expect([999, 40_000, 60_000, 125_000, 3_600_000, 3_720_000].map(waitText)).toStrictEqual(["1 s", "40 s", "1 min", "2 min 5 s", "1 h", "1 h 2 min"]);
  });
});
