import { afterEach, describe, expect, it, vi } from "vitest";
import { requestDeadline, withRequestDeadline } from "../../src/storage/request-deadline.js";

// decision D39: one storage time budget per API request: what its earlier storage operations took
// is taken off the next one's bound; the time it spends outside storage (a long poll) is not.

describe("the storage time budget of a request (D39)", () => {
  afterEach(() => void vi.useRealTimers());

  it("gives each operation the bound less what the request's earlier operations took, not counting time outside storage", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    await withRequestDeadline(async () => {
      const first = requestDeadline(500);
      expect(first.at).toBe(1_000_500);
      vi.advanceTimersByTime(300); // the first operation takes 300 ms
      first.end();
      vi.advanceTimersByTime(30_000); // a long poll outside storage
      expect(requestDeadline(500).at - Date.now()).toBe(200);
    });
  });

  it("gives every operation outside a request the whole bound", () => {
    vi.useFakeTimers({ now: 2_000_000 });
    const d = requestDeadline(500);
    vi.advanceTimersByTime(400);
    d.end();
    expect(requestDeadline(500).at).toBe(2_000_900);
  });
});
