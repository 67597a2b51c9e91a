import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { auditEventOf } from "../../src/services/audit.js";
import { canonicalJson } from "../../src/storage/audit-chain.js";

/** The canonical text as D53 defines it, written out by hand: keys sorted by code unit at every level. */
function reference(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : reference(v))).join(",")}]`;
  const entries = Object.keys(value)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${reference((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(",")}}`;
}

// decision D59 (second change of 2026-11-29): canonicalJson takes plain JSON.stringify when every object
// already lists its keys in sorted order. Whatever the order a value arrives in, the text (and so
// every digest of the chain) must be the same.
describe("canonicalJson", () => {
  const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
  const key = fc.string({ maxLength: 6 }).filter((k) => !/^(0|[1-9]\d*)$/.test(k)); // events never have integer-like keys
  const json = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: "small" }, fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 8 }), tie("array"), tie("object")),
    array: fc.array(tie("value"), { maxLength: 4 }),
    object: fc.dictionary(key, tie("value"), { maxKeys: 5 }),
  })).value;

  it(`writes the same text for a value in any key order (seed ${seed})`, () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(canonicalJson(value)).toBe(reference(value));
        expect(canonicalJson(JSON.parse(reference(value)))).toBe(reference(value)); // the sorted copy takes the fast path
      }),
      { numRuns: 400, seed },
    );
  });

  it("sorts an object whose keys are in order only through its prototype, or that has toJSON", () => {
    const inherited = Object.assign(Object.create({ b: 1 }) as object, { a: 2, c: 3 });
    expect(canonicalJson(inherited)).toBe('{"a":2,"c":3}');
    const withToJson = { a: 1, toJSON: () => ({ z: 1, y: 2 }) };
    expect(canonicalJson(withToJson)).toBe('{"y":2,"z":1}');
    expect(canonicalJson({ when: new Date(0), a: [{ d: 1, c: undefined, b: 2 }] })).toBe('{"a":[{"b":2,"d":1}],"when":"1970-01-01T00:00:00.000Z"}');
  });

  it("is plain JSON for the events the core builds (every object already in sorted order)", () => {
    const event = auditEventOf(
      { now: () => new Date(0) },
      { organization: "acme", resource: { type: "vars", id: "var-1" }, action: "update", changes: [{ field: "key", old: "a", new: "b" }, { field: "value", note: "value changed" }] },
    );
    expect(JSON.stringify(event)).toBe(reference(event));
  });
});
