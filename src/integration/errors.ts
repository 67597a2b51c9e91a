import * as z from "zod";
import { describeIssues, type ValidationIssue } from "./issues.js";

/** A JSON:API error object as the service returns it (decision D5); unknown members are kept. */
export const JsonApiErrorSchema = z.looseObject({
  status: z.string().optional(),
  title: z.string().optional(),
  detail: z.string().optional(),
  source: z.looseObject({ pointer: z.string().optional(), parameter: z.string().optional() }).optional(),
});
export type JsonApiError = z.infer<typeof JsonApiErrorSchema>;

export const JsonApiErrorDocumentSchema = z.object({ errors: z.array(JsonApiErrorSchema) });

/** The callback was refused before sending: it breaks the spec 4.2 shape or a D18 limit. */
export class CallbackValidationError extends Error {
  override readonly name = "CallbackValidationError";
  readonly issues: readonly ValidationIssue[];

  constructor(issues: readonly ValidationIssue[]) {
    super(`Invalid run task callback: ${describeIssues(issues)}`);
    this.issues = issues;
  }
}

/** The service answered the callback with a non-2xx status; `errors` holds its JSON:API error objects. */
export class CallbackError extends Error {
  override readonly name = "CallbackError";
  readonly status: number;
  readonly errors: readonly JsonApiError[];

  constructor(status: number, errors: readonly JsonApiError[]) {
    const details = errors.map((error) => error.detail ?? error.title).filter((text) => text !== undefined);
    super(`Run task callback failed with HTTP ${status}${details.length > 0 ? `: ${details.join("; ")}` : ""}`);
    this.status = status;
    this.errors = errors;
  }
}

// By name as well as instanceof: two copies of the package (or a bundled one) do not share classes.
export const isCallbackError = (value: unknown): value is CallbackError =>
  value instanceof CallbackError || (value instanceof Error && value.name === "CallbackError" && "status" in value);

export const isCallbackValidationError = (value: unknown): value is CallbackValidationError =>
  value instanceof CallbackValidationError ||
  (value instanceof Error && value.name === "CallbackValidationError" && "issues" in value);
