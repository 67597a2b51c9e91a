import { SEVERITY_ORDER, SEVERITY_RANK } from "../../src/domain/outcomes.js";

/*
 * What the run task benchmarks send and store: a callback body with realistic outcomes (the HCP
 * Terraform callback format, D17/D18) and the outcome rows the SQLite adapter writes for it, so the
 * raw-SQL baseline inserts exactly what the subject does.
 */

/** The write form of one outcome as an integration sends it. */
export function outcomeItem(n: number) {
  const severity = SEVERITY_ORDER[n % SEVERITY_ORDER.length]!;
  return {
    type: "task-result-outcomes",
    attributes: {
      "outcome-id": `CHK-${1000 + n}`,
      description: `Resource aws_s3_bucket.logs_${n} does not block public access`,
      body: `## Finding ${n}\n\nThe bucket policy allows \`s3:GetObject\` for \`*\`. Set \`block_public_acls = true\`.`,
      url: `https://scanner.example/findings/CHK-${1000 + n}`,
      tags: {
        Severity: [{ label: severity[0]!.toUpperCase() + severity.slice(1), level: severity }],
        Status: [{ label: n % 3 === 0 ? "Failed" : "Passed", level: n % 3 === 0 ? "error" : "none" }],
        Cost: [{ label: `$${n * 7}/mo`, level: "info" }],
      },
    },
  };
}

/** `PATCH task-results/:id/callback` body: a final status and `count` outcomes under data.relationships. */
export function callbackBody(status: "passed" | "failed" | "running", count: number): string {
  const outcomes = Array.from({ length: count }, (_, i) => outcomeItem(i));
  return JSON.stringify({
    data: {
      type: "task-results",
      attributes: { status, message: `${count} checks, ${status}`, url: "https://scanner.example/runs/1" },
      relationships: { outcomes: { data: outcomes } },
    },
  });
}

/**
 * The `task_result_outcomes` columns the adapter writes for `outcomeItem(n)` (minus id, result,
 * position and time): the tags JSON in write form and the enriched severity/status labels (D18).
 */
export function outcomeColumns(n: number) {
  const a = outcomeItem(n).attributes;
  const severity = a.tags.Severity[0]!;
  return {
    outcome_id: a["outcome-id"],
    description: a.description,
    body: a.body,
    url: a.url,
    tags: JSON.stringify(a.tags),
    severity_label: severity.label.toLowerCase(),
    severity_rank: SEVERITY_RANK[severity.level],
    status_label: a.tags.Status[0]!.label.toLowerCase(),
  };
}
