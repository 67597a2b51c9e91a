import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/errors.js";
import { parseLastPingSince } from "../../src/services/agents.js";

// Found from outside: dates that do not exist were rolled over (2026-02-30 became 2 March).
describe("filter[last-ping-since]", () => {
  it.each(["2026-02-30T00:00:00Z", "2026-11-31", "2025-02-29T10:00:00Z", "2026-13-01", "2026-00-10", "2026-11-27T24:00:00Z", "2026-11-27T10:60:00Z"])(
    "answers 400 for %s, a date or time that does not exist",
    (value) => {
      expect(() => parseLastPingSince(value)).toThrow(ApiError);
    },
  );

  it.each([
    ["2024-02-29T10:00:00Z", "2024-02-29T10:00:00.000Z"],
    ["2026-11-27T10:41:23+02:00", "2026-11-27T08:41:23.000Z"],
    ["2026-11-27", "2026-11-27T00:00:00.000Z"],
  ])("takes %s", (value, iso) => {
    expect(parseLastPingSince(value)).toBe(iso);
  });
});
