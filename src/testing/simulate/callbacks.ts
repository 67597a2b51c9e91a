import { CALLBACK_STATUSES, CallbackBodySchema } from "../../schemas/run-tasks.js";
import type { ReceivedCallback } from "./platform.js";
import type { SimulationCheck } from "./report.js";

const MEDIA_TYPE = "application/vnd.api+json";
const TERMINAL = new Set(["passed", "failed"]);

const statusOf = (body: string): unknown => {
  try {
    return (JSON.parse(body) as { data?: { attributes?: { status?: unknown } } })?.data?.attributes?.status;
  } catch {
    return undefined;
  }
};

/**
 * Judges the callbacks one task result received (spec 4.2): bearer token, media type, body schema
 * with the outcome limits (decisions D18, D26), status values, and order (`running` any number of
 * times, then exactly one of `passed`/`failed`, then nothing).
 */
export function checkCallbacks(scope: string, token: string, callbacks: ReceivedCallback[], sentAt: number, waitedMs: number): SimulationCheck[] {
  const check = (name: string, ok: boolean, detail: string, level: "fail" | "warn" = "fail"): SimulationCheck => ({ scope, name, level: ok ? "pass" : level, detail });
  if (callbacks.length === 0) return [check("callback", false, `no callback within ${waitedMs} ms`)];
  const checks: SimulationCheck[] = [];
  const badAuth = callbacks.filter((c) => c.authorization !== `Bearer ${token}`).length;
  checks.push(check("callback authentication", badAuth === 0, badAuth === 0 ? "every callback carries Authorization: Bearer <access_token>" : `${badAuth} callback(s) without Authorization: Bearer <access_token of the request>`));
  const badType = callbacks.find((c) => (c.contentType ?? "").split(";")[0]!.trim().toLowerCase() !== MEDIA_TYPE);
  checks.push(check("content type", !badType, badType ? `callback content type is ${badType.contentType ?? "(none)"}; expected ${MEDIA_TYPE}` : MEDIA_TYPE));
  const statuses = callbacks.map((c) => statusOf(c.body));
  const unknown = statuses.find((s) => s !== undefined && !(CALLBACK_STATUSES as readonly unknown[]).includes(s));
  const missing = statuses.includes(undefined);
  const statusDetail =
    unknown !== undefined ? `callback status ${JSON.stringify(unknown)} is not one of ${CALLBACK_STATUSES.join(", ")}` : missing ? "a callback has no data.attributes.status" : statuses.join(", ");
  checks.push(check("status values", unknown === undefined && !missing, statusDetail));
  const invalid = callbacks.map((c) => bodyProblem(c.body)).find((p) => p !== null);
  checks.push(check("callback body", !invalid, invalid ?? "valid JSON:API task-results document within the outcome limits"));
  const terminal = statuses.findIndex((s) => TERMINAL.has(String(s)));
  const orderOk = terminal === statuses.length - 1;
  checks.push(check("status order", orderOk, orderOk ? `final status ${String(statuses[terminal])}` : terminal === -1 ? `no passed or failed callback within ${waitedMs} ms (got ${statuses.join(", ")})` : `callbacks after the final status ${String(statuses[terminal])}: ${statuses.slice(terminal + 1).join(", ")}`));
  const last = callbacks[terminal === -1 ? callbacks.length - 1 : terminal]!;
  checks.push({ scope, name: "time to final callback", level: "pass", detail: `${last.at - sentAt} ms` });
  return checks;
}

function bodyProblem(body: string): string | null {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return "not JSON";
  }
  const parsed = CallbackBodySchema.safeParse(json);
  if (parsed.success) return null;
  const issue = parsed.error.issues[0]!;
  return `${issue.path.join(".") || "(root)"}: ${issue.message}`;
}
