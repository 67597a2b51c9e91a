import type * as z from "zod";
import { ApiError, quote, type ApiErrorItem } from "../errors.js";

/**
 * zod issues become JSON:API errors with a `source.pointer` (habit 7). `base` is the pointer of the
 * object being validated, e.g. `/data/attributes`; the issue path is appended with its wire names.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, base: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new ApiError("invalid-attribute", result.error.issues.map((issue) => issueToItem(issue, input, base)));
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur = input;
  for (const key of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

const label = (path: readonly PropertyKey[]): string => {
  const last = path.length > 0 ? String(path[path.length - 1]) : "value";
  const word = last.replace(/-/g, " ");
  // A key of the request's own (a map entry, an unknown attribute) is quoted, never written whole (D5).
  return quote(word.charAt(0).toUpperCase() + word.slice(1));
};

function describe(issue: z.core.$ZodIssue, input: unknown): string {
  const name = label(issue.path);
  const actual = valueAt(input, issue.path);
  if (actual === undefined && (issue.code === "invalid_type" || issue.code === "invalid_value")) return `${name} is required`;
  switch (issue.code) {
    case "invalid_type":
      if (actual === null) return `${name} can't be null`;
      return `${name} must be a ${issue.expected}`;
    case "too_small":
      if (issue.origin === "string" && Number(issue.minimum) <= 1) return `${name} can't be blank`;
      return `${name} is too short (minimum is ${issue.minimum}${issue.origin === "string" ? " characters" : ""})`;
    case "too_big":
      return `${name} is too long (maximum is ${issue.maximum}${issue.origin === "string" ? " characters" : ""})`;
    case "invalid_value":
      return `${name} must be one of: ${issue.values.map(String).join(", ")}`;
    case "unrecognized_keys":
      return `Unknown attribute: ${quote(issue.keys.join(", "))}`;
    case "custom":
      return `${name} ${issue.message}`;
    default:
      return `${name} is invalid`;
  }
}

function issueToItem(issue: z.core.$ZodIssue, input: unknown, base: string): ApiErrorItem {
  const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0] ?? ""] : issue.path;
  return { pointer: [base, ...path.map(String)].join("/"), detail: describe(issue, input) };
}
