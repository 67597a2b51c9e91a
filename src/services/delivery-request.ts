import { runTaskRequestHeaders, SIGNATURE_HEADERS } from "../domain/run-task-request.js";
import type { TaskDeliveryRecord } from "../schemas/run-task-records.js";
import type { ClaimedDelivery, ClaimedResult } from "../storage/types.js";
import type { ServiceContext } from "./context.js";
import { deliveryPayloadBinding } from "./delivery-builder.js";
import type { FreshPayloads } from "./fresh-payloads.js";
import { hmacKeyBinding } from "./task-keys.js";
import type { RunTaskSettings } from "./run-task-settings.js";

/**
 * One claimed row prepared for its attempt. Ready: the sealed payload opened and signed (D14).
 * Not ready (the payload or the task's key cannot be opened by this process's keyring): the attempt
 * fails without sending and is retried like any other failure, so a process with an outdated
 * keyring never settles a result another process could deliver. A deleted task's row is not retried:
 * its request can never be sent (`taskDeleted`), so its result ends at once.
 */
export type DeliveryAttempt = {
  /** The row as claimed: its `fencingToken` authorizes this attempt's writes. */
  row: TaskDeliveryRecord;
  /** The row's result as the claim left it (window open): a 200 advances it from this state. */
  result: ClaimedResult;
  /** decision D16: no attempt may start at or after this instant. */
  deadlineAt: string;
} & (
  | {
      ready: true;
      request: { url: string; headers: Record<string, string>; body: Uint8Array };
      /** decision D31: what an answer's excerpt must not show: the access token, the HMAC key, the signature. */
      secrets: () => string[];
      /** decision D42: the callback access token the request carries ("" for none), burned when an answer spells it. */
      accessToken: () => string;
    }
  | {
      ready: false;
      error: string;
      /** decision D40: the key this host lacks (another host holds it): leave the row. */
      lacksKey?: string;
      /** The run task was deleted: its request can never be sent, so the result ends at once. */
      taskDeleted?: true;
    }
);

/** Opened HMAC keys kept per sealed string (a rotated key is a new string): bounded, then cleared. */
const KEY_CACHE_SIZE = 1024;
const encoder = new TextEncoder();

/** The request's callback access token (D17), read back from the bytes sent; "" when absent. */
function accessTokenOf(body: Uint8Array): string {
  try {
    const token = (JSON.parse(new TextDecoder().decode(body)) as { access_token?: unknown }).access_token;
    return typeof token === "string" ? token : "";
  } catch {
    return "";
  }
}

type NotReady = { ready: false; error: string; lacksKey?: string };

/**
 * decision D40: sealed under a key this keyring does not hold (even after reading its source
 * again, `holdKeysOf`): not this host's to attempt. Null when the keyring holds it.
 */
function lacking(ctx: ServiceContext, sealed: string | null | undefined): NotReady | null {
  const id = sealed ? ctx.keyring.keyIdOf(sealed) : null;
  return id !== null && !ctx.keyring.keyIds.includes(id) ? { ready: false, error: `this host lacks key ${id}`, lacksKey: id } : null;
}

/** A row this host cannot build the request of, logged. */
function notReady(ctx: ServiceContext, row: TaskDeliveryRecord, error: string): NotReady {
  ctx.logger.error("run task request cannot be built", { deliveryId: row.id, taskResultId: row.taskResultId, reason: error });
  return { ready: false, error };
}

/**
 * Turns a claimed outbox row into its signed request (D14): the payload opened (or this process's
 * own fresh text of it), the task's HMAC key opened once per sealed string, the headers signed.
 */
export function createRequestBuilder(ctx: ServiceContext, settings: RunTaskSettings, fresh?: FreshPayloads) {
  const keys = new Map<string, string>();

  /** The task's HMAC key in the clear (D11, D14), opened once per sealed string. */
  function openKey(taskId: string, sealed: string): string {
    const known = keys.get(sealed);
    if (known !== undefined) return known;
    const key = ctx.keyring.open(sealed, hmacKeyBinding(taskId));
    if (keys.size >= KEY_CACHE_SIZE) keys.clear();
    keys.set(sealed, key);
    return key;
  }

  /** Builds the signed request (D14) from what the claim read; throws nothing. */
  function build(claimed: ClaimedDelivery, result: ClaimedResult, deadlineAt: string): DeliveryAttempt {
    const { row, task } = claimed;
    let body: Uint8Array;
    let key: string | null;
    const fromHere = fresh?.take(row.id);
    if (fromHere === undefined) {
      const missing = lacking(ctx, row.payload);
      if (missing) return { row, result, deadlineAt, ...missing };
    }
    try {
      body = encoder.encode(fromHere ?? ctx.keyring.open(row.payload, deliveryPayloadBinding(row.id)));
    } catch {
      return { row, result, deadlineAt, ...notReady(ctx, row, "the request payload could not be opened") };
    }
    // Not an error of this host or of the integration: the task is gone (no error log).
    if (!task) return { row, result, deadlineAt, ready: false, error: "the run task was deleted", taskDeleted: true };
    const missingKey = lacking(ctx, task.hmacKey);
    if (missingKey) return { row, result, deadlineAt, ...missingKey };
    try {
      key = task.hmacKey === null ? null : openKey(row.taskId, task.hmacKey);
    } catch {
      return { row, result, deadlineAt, ...notReady(ctx, row, "the run task's HMAC key could not be opened") };
    }
    const headers = runTaskRequestHeaders({ bytes: body, key, dialect: ctx.dialect, userAgent: settings.userAgent });
    // Read only when an answer has a body to excerpt: most answers have none.
    const accessToken = () => accessTokenOf(body);
    const secrets = () => [accessToken(), key ?? "", headers[SIGNATURE_HEADERS[ctx.dialect]] ?? ""];
    return { row, result, deadlineAt, ready: true, request: { url: row.url, headers, body }, secrets, accessToken };
  }

  return build;
}
