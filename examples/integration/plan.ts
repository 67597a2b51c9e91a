import type { CallbackFetch, RunTaskRequest } from "../../src/integration/index.js";

/**
 * Reading the plan the way real scanners do (decision D24): `GET plan_json_api_url` with the
 * result's access token as a bearer token, then the `terraform show -json` document's
 * `resource_changes[].change.actions`.
 */
export interface PlannedChange {
  address: string;
  actions: string[];
}

export type PlanRead = { ok: true; changes: PlannedChange[] } | { ok: false; reason: string };

/** Plans larger than this are refused rather than buffered: a demo integration stays small. */
const MAX_PLAN_BYTES = 16 * 1024 * 1024;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The resource changes of a plan document; anything that is not one is a reason, not a throw. */
export function plannedChanges(plan: unknown): PlanRead {
  if (!isObject(plan) || typeof plan.format_version !== "string") return { ok: false, reason: "not a Terraform JSON plan (no format_version)" };
  const list = plan.resource_changes ?? [];
  if (!Array.isArray(list)) return { ok: false, reason: "resource_changes is not a list" };
  const changes = list.filter(isObject).map((rc) => {
    const actions = isObject(rc.change) && Array.isArray(rc.change.actions) ? rc.change.actions.filter((a): a is string => typeof a === "string") : [];
    return { address: typeof rc.address === "string" ? rc.address : "(unknown)", actions };
  });
  return { ok: true, changes };
}

/** Downloads and reads the plan of `request`; null when the stage has none (pre_plan). */
export async function readPlan(request: RunTaskRequest, fetch: CallbackFetch): Promise<PlanRead | null> {
  const url = request.plan_json_api_url;
  if (url === undefined) return null;
  let response: Response;
  try {
    response = await fetch(url, { method: "GET", headers: { authorization: `Bearer ${request.access_token}`, accept: "application/json" } });
  } catch (error) {
    return { ok: false, reason: `download failed (${error instanceof Error ? error.message : String(error)})` };
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    return { ok: false, reason: `download answered ${response.status}` };
  }
  const text = await response.text();
  if (text.length > MAX_PLAN_BYTES) return { ok: false, reason: "plan too large" };
  try {
    return plannedChanges(JSON.parse(text));
  } catch {
    return { ok: false, reason: "plan is not JSON" };
  }
}
