import { describe, expect, it } from "vitest";
import type { VariableRecord } from "../../schemas/records.js";
import { byId, race, wins, type ConformanceContext } from "./context.js";
import { PS_SAME_ID, sensitiveVariable, variable, WS, WS2 } from "./fixtures.js";

/** The keyring re-encryption primitives of the variable store (decision D11). */
export function describeSealedValueCases(ctx: ConformanceContext): void {
  const vars = () => ctx.storage.variables;

  describe("variables: scanSensitive", () => {
    // Sensitive rows under three owners, ids in mixed case, plus plain rows in between.
    const sensitive: VariableRecord[] = [
      sensitiveVariable({ id: "var-b", key: "s1" }),
      sensitiveVariable({ id: "var-D", key: "s2" }, WS2),
      sensitiveVariable({ id: "var-a", key: "s3", category: "policy-set" }, PS_SAME_ID),
      sensitiveVariable({ id: "var-C", key: "s4" }),
      sensitiveVariable({ id: "var-e", key: "s5" }),
    ];
    const ordered = byId(sensitive); // var-C, var-D, var-a, var-b, var-e
    const seed = async (): Promise<void> => {
      for (const record of sensitive) await vars().insert(record);
      await vars().insert(variable({ id: "var-B", key: "p1" }));
      await vars().insert(variable({ id: "var-c", key: "p2" }));
    };

    it("returns sensitive rows of every owner ordered by id, at most limit", async () => {
      await seed();
      expect(await vars().scanSensitive(null, 100)).toStrictEqual(ordered);
      expect(await vars().scanSensitive(null, 2)).toStrictEqual(ordered.slice(0, 2));
    });

    it("starts strictly after afterId, which need not exist", async () => {
      await seed();
      expect(await vars().scanSensitive("var-D", 100)).toStrictEqual(ordered.slice(2));
      expect(await vars().scanSensitive("var-Z", 2)).toStrictEqual(ordered.slice(2, 4));
      expect(await vars().scanSensitive("var-e", 100)).toStrictEqual([]);
    });

    it("visits every sensitive row exactly once when scanned in batches", async () => {
      await seed();
      const seen: string[] = [];
      let after: string | null = null;
      for (;;) {
        const batch: VariableRecord[] = await vars().scanSensitive(after, 2);
        if (batch.length === 0) break;
        seen.push(...batch.map((v) => v.id));
        after = batch.at(-1)!.id;
      }
      expect(seen).toStrictEqual(ordered.map((v) => v.id));
    });

    it("finds nothing in a store without sensitive rows", async () => {
      await vars().insert(variable());
      expect(await vars().scanSensitive(null, 10)).toStrictEqual([]);
    });
  });

  describe("variables: replaceSealedValue", () => {
    const s = sensitiveVariable();
    const NEXT = "rp1:k2:bmV3bm9uY2U:bmV3Y2lwaGVy";

    it("swaps the sealed value while it equals expected, and changes nothing else", async () => {
      await vars().insert(s);
      expect(await vars().replaceSealedValue(s.id, s.value, NEXT)).toBe(true);
      expect(await vars().get(WS, s.id)).toStrictEqual({ ...s, value: NEXT });
    });

    it("refuses when the value is no longer the expected one", async () => {
      await vars().insert(s);
      await vars().replaceSealedValue(s.id, s.value, NEXT);
      expect(await vars().replaceSealedValue(s.id, s.value, "rp1:k3:x:y")).toBe(false);
      expect((await vars().get(WS, s.id))?.value).toBe(NEXT);
    });

    it("refuses on a row that is not sensitive, even when the value matches", async () => {
      const plain = variable();
      await vars().insert(plain);
      expect(await vars().replaceSealedValue(plain.id, plain.value, NEXT)).toBe(false);
      expect(await vars().get(WS, plain.id)).toStrictEqual(plain);
    });

    it("refuses for an id that does not exist", async () => {
      expect(await vars().replaceSealedValue("var-unknown", s.value, NEXT)).toBe(false);
      expect(await vars().get(WS, "var-unknown")).toBeNull();
    });

    it("lets exactly one of 10 racing swaps from the same value win", async () => {
      await vars().insert(s);
      const results = await race(10, (i) => vars().replaceSealedValue(s.id, s.value, `${NEXT}-${i}`));
      expect(wins(results)).toBe(1);
      expect((await vars().get(WS, s.id))?.value).toBe(`${NEXT}-${results.indexOf(true)}`);
    });

    it("leaves versionId alone, so an update that read the row before the swap still applies", async () => {
      await vars().insert(s);
      await vars().replaceSealedValue(s.id, s.value, NEXT);
      expect(await vars().update({ ...s, description: "d", versionId: "v2" }, s.versionId)).toStrictEqual({ ok: true });
    });

    it("keeps a swap through a reopen", async () => {
      await vars().insert(s);
      await vars().replaceSealedValue(s.id, s.value, NEXT);
      await ctx.reopen();
      expect(await vars().get(WS, s.id)).toStrictEqual({ ...s, value: NEXT });
      expect(await vars().scanSensitive(null, 10)).toStrictEqual([{ ...s, value: NEXT }]);
    });
  });
}
