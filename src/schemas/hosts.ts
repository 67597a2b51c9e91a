/**
 * One process using a runplane instance, as it last recorded itself (decision D29a): what it
 * seals with, and when it was last alive. Written only by the instance itself (its heartbeat).
 */
export interface HostRecord {
  /** Fresh per runplane instance (`host-<16 base62>`): a restarted process is a new host. */
  id: string;
  /** The machine's host name, or the name the host gave (`createRunplane({ host: { name } })`). */
  name: string;
  pid: number;
  /** The key this host seals new values with. */
  activeKeyId: string;
  /** Every key the host's keyring holds, in keyring order. */
  keyIds: string[];
  /**
   * The keys the host may seal with right now: its active key, and while it is switching (from
   * just before the switch until the beat right after it) the key it switches to as well, so a key
   * made active again is recorded before its first value is sealed. A key in here must not be retired.
   */
  sealingKeyIds: string[];
  /** How often the host beats, in ms; it counts as live for 3 of these after `lastSeenAt`. */
  intervalMs: number;
  startedAt: string;
  /** The last beat, a fixed-width UTC ISO-8601 string (so comparing the text compares instants). */
  lastSeenAt: string;
}
