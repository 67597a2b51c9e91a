/** The column conventions of rows.ts: booleans as 0/1, arrays and maps as JSON text. */
export const bool = (value: boolean): number => (value ? 1 : 0);
export const json = (value: unknown): string => JSON.stringify(value);
export const parse = <T>(text: string): T => JSON.parse(text) as T;
