import type { RunEvent } from "../domain/run-events.js";
import type { Dialect } from "../schemas/common.js";
import type { CheckedPolicyCheck, CheckedRunDetails, PhaseDetails } from "../schemas/run-details.js";
import type { CommentRecord } from "../schemas/run-comments.js";
import type { RunRecord } from "../schemas/run-task-records.js";
import {
  ApplyAttributes,
  CommentAttributes,
  ConfigurationVersionAttributes,
  IngressAttributesAttributes,
  PlanAttributes,
  PolicyCheckAttributes,
  RunAttributes,
  RunEventAttributes,
  UserAttributes,
} from "../schemas/run-wire.js";
import type { ResourceDefinition } from "./jsonapi.js";

/**
 * How the read side of a run is written (D24): runs, plans, applies, run events, comments and
 * policy checks. What runplane knows is always written; what only the host knows (option `runs`)
 * is written when the host gives it, and otherwise left out in the default dialect and written as
 * go-tfe's zero value in the hcp-terraform dialect, so go-tfe's structs decode every document
 * (decision D1).
 */

const seg = encodeURIComponent;

export const runReadResources = (basePath: string): ResourceDefinition[] => [
  {
    type: "runs",
    attributes: RunAttributes,
    verbatim: ["statusTimestamps", "actions", "permissions", "variables"],
    self: (d) => `${basePath}/runs/${seg(String(d.id))}`,
    relationships: {
      workspace: { type: "workspaces" },
      plan: { type: "plans", related: (d) => `${basePath}/runs/${seg(String(d.id))}/plan` },
      apply: { type: "applies", related: (d) => `${basePath}/runs/${seg(String(d.id))}/apply` },
      configurationVersion: { type: "configuration-versions" },
      createdBy: { type: "users" },
      confirmedBy: { type: "users" },
      costEstimate: { type: "cost-estimates" },
      taskStages: { type: "task-stages", many: true, related: (d) => `${basePath}/runs/${seg(String(d.id))}/task-stages` },
      comments: { type: "comments", many: true, related: (d) => `${basePath}/runs/${seg(String(d.id))}/comments` },
      policyChecks: { type: "policy-checks", many: true, related: (d) => `${basePath}/runs/${seg(String(d.id))}/policy-checks` },
      runEvents: { type: "run-events", many: true, related: (d) => `${basePath}/runs/${seg(String(d.id))}/run-events` },
    },
  },
  {
    type: "plans",
    attributes: PlanAttributes,
    verbatim: ["statusTimestamps"],
    optionalLinks: ["json-output"],
    self: (d) => `${basePath}/plans/${seg(String(d.id))}`,
    relationships: { exports: { type: "plan-exports", many: true } },
  },
  { type: "applies", attributes: ApplyAttributes, verbatim: ["statusTimestamps"], self: (d) => `${basePath}/applies/${seg(String(d.id))}` },
  {
    type: "run-events",
    attributes: RunEventAttributes,
    relationships: {
      actor: { type: "users" },
      comment: { type: "comments" },
      target: { type: (d) => String(d.targetType) },
    },
  },
  {
    type: "comments",
    attributes: CommentAttributes,
    self: (d) => `${basePath}/comments/${seg(String(d.id))}`,
    relationships: { runEvent: { type: "run-events" } },
  },
  { type: "users", attributes: UserAttributes },
  {
    type: "configuration-versions",
    attributes: ConfigurationVersionAttributes,
    verbatim: ["statusTimestamps"],
    self: (d) => `${basePath}/configuration-versions/${seg(String(d.id))}`,
    relationships: { ingressAttributes: { type: "ingress-attributes" } },
  },
  { type: "ingress-attributes", attributes: IngressAttributesAttributes },
  {
    type: "policy-checks",
    attributes: PolicyCheckAttributes,
    verbatim: ["statusTimestamps", "result", "actions", "permissions"],
    relationships: { run: { type: "runs", related: (d) => `${basePath}/runs/${seg(String(d.run))}` } },
  },
];

const hcp = (dialect: Dialect) => dialect === "hcp-terraform";
/** The host's value; without one go-tfe's zero value in the hcp-terraform dialect, nothing otherwise (D1). */
const or = <T>(dialect: Dialect, value: T | undefined, zero: T): T | undefined => (value !== undefined ? value : hcp(dialect) ? zero : undefined);

/** What a run document links to besides its own ids: its stages, comments, policy checks and run events. */
export interface RunLinks {
  stageIds: readonly string[];
  commentIds: readonly string[];
  policyCheckIds: readonly string[];
  runEventIds: readonly string[];
}

/** go-tfe's zero values of what runplane cannot know: it neither queues, confirms nor applies runs. */
const RUN_ZEROES = {
  actions: { "is-cancelable": false, "is-confirmable": false, "is-discardable": false, "is-force-cancelable": false },
  permissions: { "can-apply": false, "can-cancel": false, "can-discard": false, "can-force-cancel": false, "can-force-execute": false },
  allowEmptyApply: false,
  allowConfigGeneration: false,
  forceCancelAvailableAt: null,
  positionInQueue: 0,
  refresh: false,
  refreshOnly: false,
  savePlan: false,
  policyPaths: [],
  replaceAddrs: [],
  targetAddrs: [],
  variables: [],
};

export function runData(run: RunRecord, details: CheckedRunDetails | null, links: RunLinks, dialect: Dialect): Record<string, unknown> {
  const d = details ?? {};
  return {
    id: run.id,
    message: run.message,
    createdAt: run.createdAt,
    isSpeculative: run.isSpeculative,
    planOnly: run.isSpeculative,
    status: or(dialect, d.status, ""),
    statusTimestamps: or(dialect, d.statusTimestamps, {}),
    hasChanges: or(dialect, d.hasChanges ?? d.plan?.hasChanges, false),
    isDestroy: or(dialect, d.isDestroy, false),
    autoApply: or(dialect, d.autoApply, false),
    source: or(dialect, d.source, ""),
    terraformVersion: or(dialect, d.terraformVersion, ""),
    ...(hcp(dialect) ? RUN_ZEROES : {}),
    workspace: run.workspaceId,
    plan: run.planId,
    apply: run.applyId,
    configurationVersion: run.configurationVersionId,
    // The host's `createdBy` (the request's `run_created_by`) names the user.
    createdBy: run.createdBy === "" ? null : run.createdBy,
    confirmedBy: null,
    costEstimate: null,
    taskStages: links.stageIds,
    comments: links.commentIds,
    policyChecks: links.policyCheckIds,
    runEvents: links.runEventIds,
  };
}

/** A plan or an apply: `id`, the log URL (null without a log provider) and what the host gives. */
export function phaseData(id: string, phase: PhaseDetails | undefined, logReadUrl: string | null, dialect: Dialect, withChanges: boolean): Record<string, unknown> {
  const p = phase ?? {};
  return {
    id,
    logReadUrl,
    status: or(dialect, p.status, ""),
    statusTimestamps: or(dialect, p.statusTimestamps, {}),
    resourceAdditions: or(dialect, p.resourceAdditions, 0),
    resourceChanges: or(dialect, p.resourceChanges, 0),
    resourceDestructions: or(dialect, p.resourceDestructions, 0),
    resourceImports: or(dialect, p.resourceImports, 0),
    ...(withChanges ? { hasChanges: or(dialect, p.hasChanges, false), exports: [] } : {}),
  };
}

export const runEventData = (event: RunEvent): Record<string, unknown> => ({
  id: event.id,
  action: event.action,
  description: event.description,
  createdAt: event.createdAt,
  actor: event.actor,
  comment: event.comment,
  target: event.target.id,
  // The serializer reads the target's type from here (a function of the parent).
  targetType: event.target.type,
});

export const commentData = (comment: CommentRecord, runEventId: string): Record<string, unknown> => ({
  id: comment.id,
  body: comment.body,
  createdAt: comment.createdAt,
  runEvent: runEventId,
});

const CHECK_RESULT_ZERO = { result: false, passed: 0, "total-failed": 0, "hard-failed": 0, "soft-failed": 0, "advisory-failed": 0, duration: 0 };

export function policyCheckData(check: CheckedPolicyCheck, runId: string, dialect: Dialect): Record<string, unknown> {
  const r = check.result;
  const result = r && { result: r.result, passed: r.passed, "total-failed": r.totalFailed, "hard-failed": r.hardFailed, "soft-failed": r.softFailed, "advisory-failed": r.advisoryFailed, duration: r.duration };
  return {
    id: check.id,
    status: check.status,
    scope: or(dialect, check.scope, ""),
    statusTimestamps: or(dialect, check.statusTimestamps, {}),
    result: or(dialect, result, CHECK_RESULT_ZERO),
    actions: or(dialect, check.isOverridable === undefined ? undefined : { "is-overridable": check.isOverridable }, { "is-overridable": false }),
    permissions: or(dialect, check.canOverride === undefined ? undefined : { "can-override": check.canOverride }, { "can-override": false }),
    run: runId,
  };
}
