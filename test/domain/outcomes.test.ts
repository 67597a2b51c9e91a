import { describe, expect, it } from "vitest";
import {
  compareBySeverity,
  findTag,
  SEVERITY_ORDER,
  SEVERITY_RANK,
  severityLevelOf,
  severityOf,
  statusOf,
  toReadTags,
} from "../../src/domain/outcomes.js";
import { TAG_LEVELS, type Tags, type TagLevel } from "../../src/schemas/run-tasks.js";

const severity = (level: TagLevel, label = level): Tags => ({ Severity: [{ label, level }] });

describe("outcome tags", () => {
  it("turns the write-form map into the read-form array, keeping key order", () => {
    const read = toReadTags({
      Status: [{ label: "Denied", level: "error" }],
      Severity: [
        { label: "High", level: "error" },
        { label: "Recoverable", level: "info" },
      ],
      Owner: [{ label: "platform-team" }],
    });
    expect(read).toEqual([
      { label: "Status", value: [{ label: "Denied", level: "error" }] },
      {
        label: "Severity",
        value: [
          { label: "High", level: "error" },
          { label: "Recoverable", level: "info" },
        ],
      },
      { label: "Owner", value: [{ label: "platform-team", level: "none" }] },
    ]);
  });

  it("reads missing tags as an empty array", () => {
    expect(toReadTags(undefined)).toEqual([]);
    expect(toReadTags(null)).toEqual([]);
    expect(toReadTags({})).toEqual([]);
  });

  it("finds the severity and status keys in any case", () => {
    const tags: Tags = { SEVERITY: [{ label: "Low", level: "info" }], status: [{ label: "Passed", level: "none" }] };
    expect(findTag(tags, "Severity")).toEqual([{ label: "Low", level: "info" }]);
    expect(severityOf(tags)).toEqual({ label: "Low", level: "info" });
    expect(statusOf(tags)).toEqual({ label: "Passed", level: "none" });
    expect(severityOf({ Owner: [{ label: "x", level: "error" }] })).toBeNull();
    expect(statusOf(undefined)).toBeNull();
  });

  it("takes the most severe entry of a key, the first one on a tie", () => {
    const tags: Tags = {
      Severity: [
        { label: "Recoverable", level: "info" },
        { label: "High", level: "error" },
        { label: "Critical", level: "error" },
      ],
    };
    expect(severityOf(tags)).toEqual({ label: "High", level: "error" });
  });

  it("uses the first of two keys that differ only in case", () => {
    const tags: Tags = { severity: [{ label: "Low", level: "info" }], Severity: [{ label: "High", level: "error" }] };
    expect(severityOf(tags)?.label).toBe("Low");
  });
});

describe("severity ordering", () => {
  it("ranks error above warning above info above none", () => {
    expect(SEVERITY_ORDER).toEqual(["error", "warning", "info", "none"]);
    const ranks = SEVERITY_ORDER.map((level) => SEVERITY_RANK[level]);
    expect(ranks).toEqual([...ranks].sort((a, b) => b - a));
    expect(new Set(ranks).size).toBe(TAG_LEVELS.length);
  });

  it("sorts outcomes most severe first, untagged ones with none, keeping ties in order", () => {
    const outcomes = [
      { id: "a", tags: severity("none") },
      { id: "b", tags: severity("warning") },
      { id: "c" },
      { id: "d", tags: severity("error") },
      { id: "e", tags: severity("info") },
      { id: "f", tags: severity("warning") },
      { id: "g", tags: null },
    ];
    expect([...outcomes].sort(compareBySeverity).map((o) => o.id)).toEqual(["d", "b", "f", "e", "a", "c", "g"]);
  });

  it("reads the sort level from the severity key, not from other keys", () => {
    expect(severityLevelOf({ Status: [{ label: "Denied", level: "error" }] })).toBe("none");
    expect(severityLevelOf({ severity: [{ label: "Medium", level: "warning" }] })).toBe("warning");
  });
});
