import type { SealedValue, SealedValueStore } from "../../src/storage/sealed-values.js";
import { sealedColumnSql, SQL_SEALED_COLUMNS, WHOLE } from "../sql/sealed-columns.js";
import { groupedTx, type SqliteDatabase } from "./driver.js";

/** decision D29: the sealed values of every table, from the one list in `../sql/sealed-columns.ts`. */
export function createSealedValueStore(db: SqliteDatabase): SealedValueStore {
  const statements = Object.fromEntries(
    Object.entries(SQL_SEALED_COLUMNS).map(([name, column]) => {
      const text = sealedColumnSql("", column);
      const replace = db.prepare(text.replace);
      return [name, {
        first: db.prepare(text.first),
        after: db.prepare(text.after),
        // Grouped: a re-encryption batch's swaps share one commit (and its fsync).
        replace: groupedTx(db, (params: object) => replace.run(params).changes === 1),
      }];
    }),
  );
  const of = (column: string) => statements[column]!;
  return {
    async scan(column, { afterId, limit, head }) {
      const params = { head: head ?? WHOLE, limit };
      const found = afterId === null ? of(column).first.all(params) : of(column).after.all({ ...params, after: afterId });
      return found as SealedValue[];
    },
    replace: (column, id, expected, next) => of(column).replace({ id, expected, next }),
  };
}
