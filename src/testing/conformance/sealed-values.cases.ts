import { describe, expect, it } from "vitest";
import { SEALED_COLUMNS, type SealedColumn, type SealedValue } from "../../storage/sealed-values.js";
import { race, wins, type ConformanceContext } from "./context.js";
import { describeKeyRetirementCases } from "./key-retirement.cases.js";
import { sealedKinds, type SealedKind } from "./sealed-kinds.js";

/** One column's fixtures: five sealed values under mixed-case ids, and two plain rows where the kind has them. */
function sealedColumn(ctx: ConformanceContext, column: SealedColumn, kind: SealedKind) {
  const store = () => ctx.storage.sealedValues;
  // Ids in mixed case: code-unit order is C, D, a, b, e.
  const entries = ["x-b", "x-D", "x-a", "x-C", "x-e"].map((id) => ({ id, value: `rpv1:k1:bm9uY2U:${id}-${"v".repeat(90)}` }));
  const ordered: SealedValue[] = [...entries].sort((a, b) => (a.id < b.id ? -1 : 1));
  const seed = () => kind.seed(entries, kind.hasPlainRows ? ["x-B", "x-c"] : []);
  const NEXT = "rpv1:k2:bmV3bm9uY2U:bmV3Y2lwaGVy";
  return { column, kind, store, entries, ordered, seed, NEXT };
}

type SealedColumnCase = ReturnType<typeof sealedColumn>;

/** `scan`: ordered by id, after a cursor, at most a limit, cut to a head, each value once across batches. */
function sealedScanCases(c: SealedColumnCase): void {
  const { column, store, ordered, seed } = c;

  it("scans the rows holding a sealed value, ordered by id, at most limit", async () => {
    await seed();
    expect(await store().scan(column, { afterId: null, limit: 100 })).toStrictEqual(ordered);
    expect(await store().scan(column, { afterId: null, limit: 2 })).toStrictEqual(ordered.slice(0, 2));
  });

  it("starts strictly after afterId, which need not exist", async () => {
    await seed();
    expect(await store().scan(column, { afterId: "x-D", limit: 100 })).toStrictEqual(ordered.slice(2));
    expect(await store().scan(column, { afterId: "x-Z", limit: 2 })).toStrictEqual(ordered.slice(2, 4));
    expect(await store().scan(column, { afterId: "x-e", limit: 100 })).toStrictEqual([]);
  });

  it("cuts each value to its first head characters when asked", async () => {
    await seed();
    const heads = await store().scan(column, { afterId: null, limit: 100, head: 12 });
    expect(heads).toStrictEqual(ordered.map((e) => ({ id: e.id, value: e.value.slice(0, 12) })));
  });

  it("visits every value exactly once when scanned in batches", async () => {
    await seed();
    const seen: string[] = [];
    for (let afterId: string | null = null; ; ) {
      const batch: SealedValue[] = await store().scan(column, { afterId, limit: 2 });
      if (batch.length === 0) break;
      seen.push(...batch.map((v) => v.id));
      afterId = batch.at(-1)!.id;
    }
    expect(seen).toStrictEqual(ordered.map((v) => v.id));
  });
}

/** `replace`: a compare-and-swap of the value alone, one winner among racers, kept through a reopen. */
function sealedReplaceCases(ctx: ConformanceContext, c: SealedColumnCase): void {
  const { column, kind, store, entries, seed, NEXT } = c;

  it("swaps a value while it equals expected, and changes nothing else of the row", async () => {
    await seed();
    const before = await kind.get("x-a");
    expect(await store().replace(column, "x-a", entries[2]!.value, NEXT)).toBe(true);
    expect(await kind.get("x-a")).toStrictEqual({ ...before, [kind.field]: NEXT });
    expect(await store().scan(column, { afterId: "x-D", limit: 1 })).toStrictEqual([{ id: "x-a", value: NEXT }]);
  });

  it("refuses a stale expected value, an unknown id and a row holding no sealed value", async () => {
    await seed();
    await store().replace(column, "x-a", entries[2]!.value, NEXT);
    expect(await store().replace(column, "x-a", entries[2]!.value, "rpv1:k3:x:y")).toBe(false);
    expect(await store().replace(column, "x-unknown", "a", NEXT)).toBe(false);
    if (kind.hasPlainRows) {
      const plain = await kind.get("x-B");
      expect(await store().replace(column, "x-B", String(plain![kind.field]), NEXT)).toBe(false);
      expect(await kind.get("x-B")).toStrictEqual(plain);
    }
    expect((await kind.get("x-a"))![kind.field]).toBe(NEXT);
  });

  it("lets exactly one of 10 racing swaps from the same value win", async () => {
    await seed();
    const results = await race(10, (i) => store().replace(column, "x-C", entries[3]!.value, `${NEXT}-${i}`));
    expect(wins(results)).toBe(1);
    expect((await kind.get("x-C"))![kind.field]).toBe(`${NEXT}-${results.indexOf(true)}`);
  });

  it("keeps a swap through a reopen", async () => {
    await seed();
    await store().replace(column, "x-e", entries[4]!.value, NEXT);
    await ctx.reopen();
    expect((await kind.get("x-e"))![kind.field]).toBe(NEXT);
    expect((await store().scan(column, { afterId: "x-b", limit: 10 }))).toStrictEqual([{ id: "x-e", value: NEXT }]);
  });
}

/** `sealedValues`, the re-encryption primitives (decisions D11, D29), for every kind of sealed value. */
export function describeSealedValueCases(ctx: ConformanceContext): void {
  const kinds = sealedKinds(ctx);

  for (const column of SEALED_COLUMNS) {
    const c = sealedColumn(ctx, column, kinds[column]);

    describe(`sealedValues: ${column}`, () => {
      sealedScanCases(c);
      sealedReplaceCases(ctx, c);
    });
  }

  describeKeyRetirementCases(ctx);
}
