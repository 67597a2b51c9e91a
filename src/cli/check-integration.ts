import { DIALECTS, type Dialect } from "../schemas/common.js";
import { RUN_STAGES, type RunStage } from "../schemas/run-tasks.js";
import { formatReport, simulateRunTask } from "../testing/simulate/index.js";
import { parse } from "./args.js";

const oneOf = <T extends string>(list: readonly T[], value: string, what: string): T => {
  if ((list as readonly string[]).includes(value)) return value as T;
  throw new Error(`${what} must be one of ${list.join(", ")} (got ${value})`);
};

/**
 * `runplane check-integration <url> --hmac-key <key> [--stage post_plan]... [--dialect default]
 * [--timeout <ms>]`: plays the platform against an integration and prints the report.
 * Returns false (exit 1) when a check fails.
 */
export async function checkIntegration(args: string[], out: (line: string) => void): Promise<boolean> {
  const { values, positionals } = parse(
    args,
    { "hmac-key": { type: "string" }, stage: { type: "string", multiple: true }, dialect: { type: "string" }, timeout: { type: "string" } },
    false,
  );
  const url = positionals[0];
  if (url === undefined || positionals.length > 1) throw new Error("usage: runplane check-integration <url> --hmac-key <key> [--stage post_plan] [--dialect default|hcp-terraform]");
  if (typeof values["hmac-key"] !== "string" || values["hmac-key"] === "") throw new Error("--hmac-key is required: the key the integration verifies signatures with");
  const stageValues = (values.stage as unknown as string[] | undefined) ?? ["post_plan"];
  const stages: RunStage[] = stageValues.map((s) => oneOf(RUN_STAGES, s, "--stage"));
  const dialect: Dialect = typeof values.dialect === "string" ? oneOf(DIALECTS, values.dialect, "--dialect") : "default";
  const timeout = typeof values.timeout === "string" ? Number(values.timeout) : 10_000;
  if (!Number.isInteger(timeout) || timeout <= 0) throw new Error("--timeout must be a positive number of milliseconds");
  const report = await simulateRunTask({ url, hmacKey: values["hmac-key"], stages, dialect, responseTimeoutMs: timeout, callbackTimeoutMs: timeout });
  out(formatReport(report));
  return report.ok;
}
