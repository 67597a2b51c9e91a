import type { EnforcementLevel } from "../schemas/run-tasks.js";
import { buildRunTaskRequest, type RunTaskRequestInput } from "./run-task-request.js";

/** The fields of a run task request that differ between the results of one stage (spec 4.1). */
export interface ResultFields {
  accessToken: string;
  taskResult: { id: string; enforcementLevel: EnforcementLevel };
}

/** Keys whose values a template splices in, in the order JSON.stringify writes them (D14). */
const SPLICED = ["access_token", "task_result_callback_url", "task_result_enforcement_level", "task_result_id"] as const;

/**
 * The serialized request of every result of one stage (decision D14) from one `JSON.stringify`:
 * building and serializing the whole payload per result measured a tenth of a
 * delivery's CPU. The stage's request is serialized once with the per-result values empty and cut
 * at those keys; each result's text is the pieces with its values, JSON-escaped, in between. The
 * text is exactly `JSON.stringify(buildRunTaskRequest(...))` for that result (a property test
 * says so). A key is found by `,"name":"`: inside a serialized string every quote is escaped, so
 * that sequence only occurs where the key itself is written.
 */
export function runTaskRequestTemplate(stage: Omit<RunTaskRequestInput, keyof ResultFields>): (result: ResultFields) => string {
  const blank = buildRunTaskRequest({ ...stage, accessToken: "", taskResult: { id: "", enforcementLevel: "advisory" } });
  const text = JSON.stringify({ ...blank, task_result_callback_url: "", task_result_enforcement_level: "" });
  const pieces: string[] = [];
  let from = 0;
  for (const key of SPLICED) {
    const marker = `,"${key}":""`;
    const at = text.indexOf(marker, from);
    if (at < 0) throw new Error(`run task request template: no ${key}`);
    pieces.push(text.slice(from, at + marker.length - 2));
    from = at + marker.length - 2;
  }
  pieces.push(text.slice(from));
  // The callback URL is the template's own with the result id inserted: the prefix is fixed per stage.
  const probe = "taskrs-template-probe";
  const callback = buildRunTaskRequest({ ...stage, accessToken: "", taskResult: { id: probe, enforcementLevel: "advisory" } }).task_result_callback_url;
  const before = callback.slice(0, callback.lastIndexOf(probe));
  const after = callback.slice(callback.lastIndexOf(probe) + probe.length);
  // Each piece after the first starts with the closing `""` of its blank value: cut once, here.
  const [head, afterToken, afterCallback, afterLevel, afterId] = [pieces[0]!, ...pieces.slice(1).map((p) => p.slice(2))] as [string, string, string, string, string];
  const value = (s: string): string => JSON.stringify(s);
  // In SPLICED order: access_token, task_result_callback_url, task_result_enforcement_level, task_result_id.
  return (r) =>
    head +
    value(r.accessToken) +
    afterToken +
    value(`${before}${encodeURIComponent(r.taskResult.id)}${after}`) +
    afterCallback +
    value(r.taskResult.enforcementLevel) +
    afterLevel +
    value(r.taskResult.id) +
    afterId;
}
