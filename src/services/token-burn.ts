import { sha256Hex } from "../crypto/random.js";
import type { ClaimedResult } from "../storage/types.js";
import type { ServiceContext } from "./context.js";

/** Compare-and-set rounds a burn tries against racing writers (a callback, the sweeper) before it gives up. */
const ROUNDS = 5;

/**
 * decision D42: a callback access token that an integration's answer spelled is burned before the
 * answer's excerpt is stored: the result's token digest is cleared, so the callback and the
 * artifact downloads refuse the token (401, like any wrong one). The redaction recognised one
 * spelling; an answer may hold others it does not know, which are then worth nothing. A result
 * that is final accepts no callback: nothing to burn. Resolves the result as it now stands (its
 * new version: a 200's own advance follows it), or null when the burn could not be written, and
 * then the caller keeps no excerpt of the answer.
 */
export async function burnCallbackToken(ctx: Pick<ServiceContext, "storage" | "now" | "logger">, resultId: string, token: string): Promise<ClaimedResult | null> {
  const digest = sha256Hex(token);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const r = await ctx.storage.taskResults.get(resultId);
      if (!r) return null;
      if (r.accessTokenDigest !== digest || (r.status !== "pending" && r.status !== "running")) return r;
      const next = { ...r, accessTokenDigest: null, version: r.version + 1, updatedAt: ctx.now().toISOString() };
      const stored = await ctx.storage.taskResults.transition(r.id, { statuses: [r.status], version: r.version }, next);
      if (stored) {
        ctx.logger.warn("callback token burned: the integration's answer spelled it", { taskResultId: resultId });
        return stored;
      }
    }
  } catch (error) {
    ctx.logger.warn("callback token not burned", { taskResultId: resultId, error: error instanceof Error ? error.name : typeof error });
  }
  return null;
}
