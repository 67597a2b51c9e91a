/**
 * The one place a sensitive value becomes null (decision D10): responses always carry `value`, and it
 * is `null` for a sensitive variable or parameter, whatever is stored.
 */
export function maskedValue(record: { sensitive: boolean }, plaintext: string): string | null {
  return record.sensitive ? null : plaintext;
}
