import type { SealedValue, SealedValueStore } from "../../src/storage/sealed-values.js";
import { sealedColumnSql, SQL_SEALED_COLUMNS, WHOLE } from "../sql/sealed-columns.js";
import { changed, rowsOf, sql, type PgPoolLike, type Statement } from "./driver.js";

/** decision D29: the sealed values of every table, from the one list in `../sql/sealed-columns.ts`. */
export function createSealedValueStore(pool: PgPoolLike, q: string): SealedValueStore {
  const statements = new Map<string, { first: Statement; after: Statement; replace: Statement }>();
  for (const [name, column] of Object.entries(SQL_SEALED_COLUMNS)) {
    const text = sealedColumnSql(q, column);
    // Typed parameters: node-postgres sends them untyped, and `substr` and LIMIT need integers.
    const typed = (s: string) => s.replace("@head", "@head::integer").replace("@after", "@after::text");
    statements.set(name, { first: sql(typed(text.first)), after: sql(typed(text.after)), replace: sql(text.replace) });
  }
  const of = (column: string) => statements.get(column)!;
  return {
    async scan(column, { afterId, limit, head }) {
      const params = { head: head ?? WHOLE, limit };
      if (afterId === null) return rowsOf<SealedValue>(pool, of(column).first, params);
      return rowsOf<SealedValue>(pool, of(column).after, { ...params, after: afterId });
    },
    replace: async (column, id, expected, next) => (await changed(pool, of(column).replace, { id, expected, next })) === 1,
  };
}
