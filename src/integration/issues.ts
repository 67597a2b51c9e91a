import type { ZodError } from "zod";

/** One problem found in a request or callback body; `pointer` is a JSON pointer (`""` is the whole body). */
export interface ValidationIssue {
  pointer: string;
  message: string;
}

// RFC 6901: `~` and `/` inside a key must be escaped, or a tag named "a/b" would point elsewhere.
const escapeToken = (token: string): string => token.replaceAll("~", "~0").replaceAll("/", "~1");

export const toPointer = (path: readonly PropertyKey[]): string =>
  path.map((key) => `/${escapeToken(String(key))}`).join("");

export const issuesOf = (error: ZodError): ValidationIssue[] =>
  error.issues.map((issue) => ({ pointer: toPointer(issue.path), message: issue.message }));

export const describeIssues = (issues: readonly ValidationIssue[]): string =>
  issues.map((issue) => `${issue.pointer || "(body)"}: ${issue.message}`).join("; ");
