import type {
  RunRecord,
  RunTaskRecord,
  TaskDeliveryRecord,
  TaskResultOutcomeRecord,
  TaskResultRecord,
  TaskStageRecord,
  WorkspaceTaskRecord,
} from "../../schemas/run-task-records.js";
import { at } from "./fixtures.js";

/** Run task record builders, every field set to a non-default value so a dropped column shows. */

export const rid = (prefix: string, n: number): string => `${prefix}-${String(n).padStart(16, "0")}`;

export function runTask(overrides: Partial<RunTaskRecord> = {}): RunTaskRecord {
  return {
    id: rid("task", 1),
    organization: "acme",
    name: "scanner",
    url: "https://scanner.example/hook?x=1",
    description: "checks things",
    category: "task",
    enabled: true,
    hmacKey: "rpv1:k1:bm9uY2U:c2VhbGVk",
    globalConfiguration: { enabled: true, stages: ["pre_plan", "post_plan"], enforcementLevel: "mandatory" },
    agentPoolId: "apool-AAAAAAAAAAAAAAAA",
    version: 1,
    createdAt: at(0),
    updatedAt: at(1),
    ...overrides,
  };
}

export function workspaceTask(overrides: Partial<WorkspaceTaskRecord> = {}): WorkspaceTaskRecord {
  return {
    id: rid("wstask", 1),
    workspaceId: "ws-AAAAAAAAAAAAAAAA",
    organization: "acme",
    taskId: rid("task", 1),
    enforcementLevel: "mandatory",
    stages: ["pre_plan", "post_plan"],
    version: 1,
    createdAt: at(0),
    updatedAt: at(1),
    ...overrides,
  };
}

export function run(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    id: rid("run", 1),
    organization: "acme",
    workspaceId: "ws-AAAAAAAAAAAAAAAA",
    message: "Triggered via API",
    createdBy: "someone",
    createdAt: at(0),
    isSpeculative: true,
    configurationVersionId: "cv-AAAAAAAAAAAAAAAA",
    configurationVersionDownloadable: false,
    planId: "plan-AAAAAAAAAAAAAAAA",
    applyId: "apply-AAAAAAAAAAAAAAAA",
    vcs: { branch: "main", repoUrl: "https://git.example/r", commitUrl: null, pullRequestUrl: "https://git.example/r/pull/1" },
    ...overrides,
  };
}

export function stage(overrides: Partial<TaskStageRecord> = {}): TaskStageRecord {
  return {
    id: rid("ts", 1),
    runId: rid("run", 1),
    workspaceId: "ws-AAAAAAAAAAAAAAAA",
    organization: "acme",
    stage: "post_plan",
    sequence: 1,
    status: "pending",
    statusTimestamps: {},
    overridden: false,
    overrideComment: null,
    version: 1,
    createdAt: at(0),
    updatedAt: at(0),
    ...overrides,
  };
}

export function result(overrides: Partial<TaskResultRecord> = {}): TaskResultRecord {
  return {
    id: rid("taskrs", 1),
    stageId: rid("ts", 1),
    runId: rid("run", 1),
    workspaceId: "ws-AAAAAAAAAAAAAAAA",
    organization: "acme",
    stage: "post_plan",
    position: 0,
    status: "pending",
    message: null,
    url: null,
    statusTimestamps: {},
    taskId: rid("task", 1),
    taskName: "scanner",
    taskUrl: "https://scanner.example/hook",
    workspaceTaskId: rid("wstask", 1),
    enforcementLevel: "advisory",
    isSpeculative: true,
    outcomesCount: 0,
    agentPoolId: "apool-AAAAAAAAAAAAAAAA",
    accessTokenDigest: null,
    deadlineAt: null,
    deadlineMaxAt: null,
    version: 1,
    createdAt: at(0),
    updatedAt: at(0),
    ...overrides,
  };
}

export function outcome(overrides: Partial<TaskResultOutcomeRecord> = {}): TaskResultOutcomeRecord {
  return {
    id: rid("tro", 1),
    taskResultId: rid("taskrs", 1),
    position: 0,
    outcomeId: "CHK-1",
    description: "Bucket allows public read",
    body: "## Details\nmarkdown",
    url: "https://scanner.example/finding/1",
    tags: { Severity: [{ label: "High", level: "error" }], "Cost Centre": [{ label: "42", level: "none" }] },
    severityLabel: "high",
    severityRank: 3,
    statusLabel: null,
    createdAt: at(5),
    ...overrides,
  };
}

export function delivery(overrides: Partial<TaskDeliveryRecord> = {}): TaskDeliveryRecord {
  return {
    id: rid("dlv", 1),
    taskResultId: rid("taskrs", 1),
    stageId: rid("ts", 1),
    runId: rid("run", 1),
    taskId: rid("task", 1),
    stage: "post_plan",
    url: "https://scanner.example/hook",
    attempt: 0,
    dueAt: at(2),
    leaseOwner: null,
    leaseExpiresAt: null,
    fencingToken: 0,
    payload: "rpv1:k1:bm9uY2U:cGF5bG9hZA",
    createdAt: at(2),
    deliveredAt: null,
    closedAt: null,
    lastError: null,
    agentPoolId: null,
    ...overrides,
  };
}

/** `running` with version+1, as the core writes a started stage. */
export const started = (s: TaskStageRecord): TaskStageRecord => ({
  ...s,
  status: "running",
  statusTimestamps: { "running-at": "2024-05-01T10:00:02.000+00:00" },
  version: s.version + 1,
  updatedAt: at(2),
});
