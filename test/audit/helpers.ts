import Database from "better-sqlite3";
import { expect } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import type { AuditEntry } from "../../src/schemas/audit.js";
import type { Storage } from "../../src/storage/types.js";
import type { TestApp } from "../helpers/app.js";

/** The storages the recording tests run on: one transaction each way (memory step, SQLite savepoint). */
export const STORAGES: [string, () => Storage][] = [
  ["memory", () => createMemoryStorage()],
  ["sqlite", () => createSqliteStorage(new Database(":memory:"))],
];

/** Every event of `organization`, oldest first. */
export async function eventsOf(storage: Storage, organization = "acme"): Promise<AuditEntry[]> {
  return (await storage.audit!.list(organization, { offset: 0, limit: 1000 })).items;
}

/** The one event of `action` on `type`; fails when there is none or several. */
export async function theEvent(storage: Storage, type: string, action: string, organization = "acme"): Promise<AuditEntry> {
  const found = (await eventsOf(storage, organization)).filter((e) => e.resource.type === type && e.action === action);
  expect(found, `one ${type} ${action} event`).toHaveLength(1);
  return found[0]!;
}

/** The trail as text holds none of `secrets` (whatever field they would hide in). */
export async function expectNoSecret(storage: Storage, secrets: readonly string[]): Promise<void> {
  for (const organization of await storage.audit!.organizations()) {
    const text = JSON.stringify(await eventsOf(storage, organization));
    for (const secret of secrets) expect(text).not.toContain(secret);
  }
}

/** Headers of a request as a proxy forwards it, with a chosen request id. */
export const FROM_PROXY = { "x-forwarded-for": "198.51.100.1, 203.0.113.9", "x-request-id": "req-audit-1" };

export async function tokenIdOf(app: TestApp, token: string): Promise<string> {
  const { sha256Hex } = await import("../../src/crypto/random.js");
  return (await app.storage.apiTokens.findByDigest(sha256Hex(token)))!.id;
}
