/**
 * `runplane/storage`: the storage contract for authors of their own adapter: `Storage`,
 * every store and record type. Types only; the rules are the JSDoc of `./types.ts`.
 */
export type * from "./types.js";
export type * from "../schemas/records.js";
export type * from "./audit-types.js";
export type * from "../schemas/audit.js";
export type { AuditHead, ChainBreak } from "./audit-chain.js";
