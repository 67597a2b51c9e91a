import { describe, expect, it } from "vitest";
import { createKeyring, generateKey } from "../../crypto/keyring.js";
import { createRunplane } from "../../index.js";
import { silentLogger } from "../../logger.js";
import { sealedBinding } from "../../services/sealing.js";
import { SEALED_COLUMNS, type SealedColumn } from "../../storage/sealed-values.js";
import type { ConformanceContext } from "./context.js";
import { sealedKinds } from "./sealed-kinds.js";

const k1 = { id: "k1", key: generateKey() };
const k2 = { id: "k2", key: generateKey() };
const plaintext = (column: SealedColumn, id: string) => `${column} of ${id}: hunter2`;
const unreachable = { send: async () => Promise.reject(new Error("no requests in conformance cases")), close: async () => undefined };

/**
 * Decision D29: after `reencrypt` no stored value of any kind (delivery payloads
 * included) is left under a retired key, and a keyring that drops a key still in use is refused.
 */
export function describeKeyRetirementCases(ctx: ConformanceContext): void {
  const kinds = sealedKinds(ctx);
  const ids = ["r-1", "r-2", "r-3", "r-4"];

  /** Every kind holds r-1..r-3 sealed with k1 and r-4 with k2, bound to its row as the core binds it. */
  async function seedEveryKind(): Promise<void> {
    const ring = createKeyring({ keys: [k1, k2] });
    const other = createKeyring({ keys: [k2] });
    for (const column of SEALED_COLUMNS) {
      const entries = ids.map((id) => ({ id, value: (id === "r-4" ? other : ring).seal(plaintext(column, id), sealedBinding(column, id)) }));
      await kinds[column].seed(entries);
    }
  }
  const rotated = () => createRunplane({ storage: ctx.storage, keyring: { keys: [k1, k2], active: "k2" }, logger: silentLogger, transport: unreachable });

  describe("key rotation over every kind of sealed value", () => {
    it("reencrypt leaves no value under the retired key, each opening to what was sealed", async () => {
      await seedEveryKind();
      const runplane = rotated();
      expect(await runplane.sealedValues()).toStrictEqual({
        k1: Object.fromEntries(SEALED_COLUMNS.map((c) => [c, 3])),
        k2: Object.fromEntries(SEALED_COLUMNS.map((c) => [c, 1])),
      });
      expect(await runplane.reencrypt()).toBe(3 * SEALED_COLUMNS.length);
      expect(await runplane.reencrypt()).toBe(0);
      expect(await runplane.sealedValues()).toStrictEqual({ k2: Object.fromEntries(SEALED_COLUMNS.map((c) => [c, 4])) });

      const retired = createKeyring({ keys: [k2] });
      for (const column of SEALED_COLUMNS) {
        for (const id of ids) {
          const stored = String((await kinds[column].get(id))![kinds[column].field]);
          expect(retired.keyIdOf(stored), `${column} ${id}`).toBe("k2");
          expect(retired.open(stored, sealedBinding(column, id))).toBe(plaintext(column, id));
        }
      }
      await runplane.runTasks.close();
    });

    it("refuses to drop a key that still seals a value, and drops it once nothing uses it", async () => {
      await seedEveryKind();
      const runplane = rotated();
      await expect(runplane.keyring.reload({ keys: [k2] })).rejects.toThrow(/k1 still seals 9 values/);
      expect(runplane.keyring.keyIds).toStrictEqual(["k1", "k2"]);
      await runplane.reencrypt();
      expect(await runplane.keyring.reload({ keys: [k2] })).toStrictEqual({ changed: true, keyIds: ["k2"], activeKeyId: "k2" });
      await runplane.runTasks.close();
    });
  });
}
