import { describe, expect, it } from "vitest";
import { closest, editDistance } from "../src/suggest.js";

/** "Did you mean" for option keys and CLI flags. */
describe("closest", () => {
  it("suggests the nearest name, a transposition counting as one edit and case ignored", () => {
    expect(closest("stoarge", ["logger", "storage", "clock"])).toBe("storage");
    expect(closest("basepath", ["basePath", "baseUrl"])).toBe("basePath");
    expect(closest("port", ["host", "post"])).toBe("post");
  });

  it("suggests the first of the names at the same, smallest distance", () => {
    expect([editDistance("hots", "host"), editDistance("hots", "hosts")]).toStrictEqual([1, 1]);
    expect(closest("hots", ["host", "hosts"])).toBe("host");
    expect(closest("hots", ["hosts", "host"])).toBe("hosts");
    expect(closest("loger", ["logger", "lower", "loner"])).toBe("logger");
  });

  it("suggests nothing when every name is too far to be a likely typo", () => {
    expect(closest("zzz", ["storage", "logger"])).toBeUndefined();
    expect(closest("anything", [])).toBeUndefined();
  });
});
