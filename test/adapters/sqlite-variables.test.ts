import { describe, expect, it } from "vitest";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { variablesScope } from "../../src/storage/revisions.js";
import { variable, WS } from "../../src/testing/conformance/fixtures.js";
import { useTempSqliteFile } from "../helpers/sqlite-files.js";

/** Variable writes share commits (group commit); each must still keep its own guard. */
describe("sqlite variables: writes asked for together", () => {
  const files = useTempSqliteFile("runplane-vars-group-");

  it("refuses only the duplicate key of a group; the others are stored and survive a reopen", async () => {
    const storage = createSqliteStorage(files.connect());
    const records = Array.from({ length: 20 }, (_, i) => variable({ id: `var-${String(i).padStart(16, "0")}`, key: `k${i}` }));
    const clash = variable({ id: "var-clash0000000000", key: "k7" });
    const results = await Promise.all([...records, clash].map((r) => storage.variables.insert(r)));
    expect(results.slice(0, 20).every((r) => r.ok)).toBe(true);
    expect(results[20]).toStrictEqual({ ok: false, reason: "duplicate-key" });
    await storage.close();

    const reopened = createSqliteStorage(files.connect());
    const { items } = await reopened.variables.list(WS);
    expect(items.map((v) => v.id).sort()).toStrictEqual(records.map((r) => r.id).sort());
    expect((await reopened.revisions!.read([variablesScope(WS)]))[0]).toBeGreaterThanOrEqual(20);
    await reopened.close();
  });

  it("lets a stale update and a delete of the same group answer for themselves", async () => {
    const storage = createSqliteStorage(files.connect());
    const a = variable({ id: "var-a000000000000000", key: "a" });
    const b = variable({ id: "var-b000000000000000", key: "b" });
    await Promise.all([storage.variables.insert(a), storage.variables.insert(b)]);
    const [stale, fresh, removed] = await Promise.all([
      storage.variables.update({ ...a, value: "x", versionId: "v-next" }, "v-wrong"),
      storage.variables.update({ ...a, value: "y", versionId: "v-next" }, a.versionId),
      storage.variables.delete(WS, b.id),
    ]);
    expect(stale).toStrictEqual({ ok: false, reason: "stale" });
    expect(fresh).toStrictEqual({ ok: true });
    expect(removed).toBe(true);
    expect((await storage.variables.get(WS, a.id))?.value).toBe("y");
    expect(await storage.variables.get(WS, b.id)).toBeNull();
    await storage.close();
  });
});
