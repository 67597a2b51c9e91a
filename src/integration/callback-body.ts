import type * as z from "zod";
import {
  CallbackBodySchema,
  type CallbackStatus,
  type RunTaskRequest,
  type TagLevel,
} from "../schemas/run-tasks.js";
import { issuesOf, type ValidationIssue } from "./issues.js";

/** One entry of an outcome tag (spec 2.3); `level` defaults to `none` on the service. */
export interface CallbackTag {
  label: string;
  level?: TagLevel;
}

/**
 * An outcome (spec 2.3, limits of decision D18). `tags` maps a header name to its entries; keys
 * named `Severity` and `Status` (any case) are rendered specially. Key order is kept.
 */
export interface CallbackOutcome {
  outcomeId: string;
  description: string;
  /** Markdown. */
  body?: string;
  url?: string;
  tags?: Readonly<Record<string, readonly CallbackTag[]>>;
}

/** What an integration reports (spec 4.2). */
export interface CallbackUpdate {
  status: CallbackStatus;
  message?: string;
  url?: string;
  outcomes?: readonly CallbackOutcome[];
}

/** The JSON:API document PATCHed to the callback URL. */
export type CallbackDocument = z.input<typeof CallbackBodySchema>;

export type BuildCallbackResult = { ok: true; document: CallbackDocument } | { ok: false; issues: ValidationIssue[] };

// go-tfe tags every optional attribute `omitempty`: an empty string is not sent at all.
const optional = <K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> =>
  value === undefined || value === "" ? {} : ({ [key]: value } as Record<K, string>);

const toWireTags = (tags: NonNullable<CallbackOutcome["tags"]>) =>
  Object.fromEntries(
    Object.entries(tags).map(([key, entries]) => [
      key,
      entries.map((entry) => (entry.level === undefined ? { label: entry.label } : { label: entry.label, level: entry.level })),
    ]),
  );

// Attribute keys in go-tfe's order (encoding/json sorts map keys), so the bytes match its wire form.
const toWireOutcome = (outcome: CallbackOutcome) => ({
  type: "task-result-outcomes" as const,
  attributes: {
    ...optional("body", outcome.body),
    description: outcome.description,
    "outcome-id": outcome.outcomeId,
    ...(outcome.tags === undefined || Object.keys(outcome.tags).length === 0 ? {} : { tags: toWireTags(outcome.tags) }),
    ...optional("url", outcome.url),
  },
});

/**
 * Builds go-tfe's wire form of a callback and checks it against the service's own callback
 * schema (decisions D17, D18). Outcomes are checked even when they will not be sent, so a bad
 * outcome fails the same way whatever the service supports; they are sent only when the request's
 * `capabilities.outcomes` is true (spec 4.2), and only when there are any (go-tfe `omitempty`).
 */
export function buildCallbackDocument(
  update: CallbackUpdate,
  capabilities: RunTaskRequest["capabilities"],
): BuildCallbackResult {
  const outcomes = (update.outcomes ?? []).map(toWireOutcome);
  const attributes = { ...optional("message", update.message), status: update.status, ...optional("url", update.url) };
  const full = { data: { type: "task-results" as const, attributes, relationships: { outcomes: { data: outcomes } } } };
  const checked = CallbackBodySchema.safeParse(full);
  if (!checked.success) return { ok: false, issues: issuesOf(checked.error) };
  const send = capabilities.outcomes && outcomes.length > 0;
  return { ok: true, document: send ? full : { data: { type: "task-results", attributes } } };
}
