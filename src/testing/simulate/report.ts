/** One line of a simulation report: `fail` breaks the contract, `warn` is advice (spec 4.1, 4.2). */
export interface SimulationCheck {
  /** `verification`, `signature`, or the stage name. */
  scope: string;
  name: string;
  level: "pass" | "warn" | "fail";
  detail: string;
}

export interface SimulationReport {
  /** True when no check failed. */
  ok: boolean;
  checks: SimulationCheck[];
}

const MARK = { pass: "ok  ", warn: "warn", fail: "FAIL" } as const;

/** The report as readable lines, one per check, then a summary line. */
export function formatReport(report: SimulationReport): string {
  const lines = report.checks.map((c) => `${MARK[c.level]}  [${c.scope}] ${c.name}: ${c.detail}`);
  const failed = report.checks.filter((c) => c.level === "fail").length;
  lines.push(failed === 0 ? "integration passes the run task contract" : `${failed} check${failed === 1 ? "" : "s"} failed`);
  return lines.join("\n");
}
