import type { TaskDeliveryRecord } from "../../src/schemas/run-task-records.js";
import type { RunStage } from "../../src/schemas/run-tasks.js";
import type { TableColumns } from "./statements.js";

/**
 * A `task_deliveries` row joined with its payload. The payload lives in `task_delivery_payloads`
 * (migration 0009), written once: claims and settles rewrite only the small outbox row.
 */
export interface DeliveryRow {
  id: string;
  task_result_id: string;
  stage_id: string;
  run_id: string;
  task_id: string;
  stage: string;
  url: string;
  attempt: number;
  due_at: string;
  lease_owner: string | null;
  lease_expires_at: string | null;
  fencing_token: number;
  payload: string;
  created_at: string;
  delivered_at: string | null;
  closed_at: string | null;
  last_error: string | null;
  /** decision D34: migration 0017 (SQLite), 0014 (PostgreSQL); null for the platform's own rows. */
  agent_pool_id: string | null;
}
export const DELIVERIES: TableColumns<Omit<DeliveryRow, "payload">> = {
  table: "task_deliveries",
  columns: [
    "id",
    "task_result_id",
    "stage_id",
    "run_id",
    "task_id",
    "stage",
    "url",
    "attempt",
    "due_at",
    "lease_owner",
    "lease_expires_at",
    "fencing_token",
    "created_at",
    "delivered_at",
    "closed_at",
    "last_error",
    "agent_pool_id",
  ],
};
export const toDeliveryRow = (r: TaskDeliveryRecord): Omit<DeliveryRow, "payload"> => ({
  id: r.id,
  task_result_id: r.taskResultId,
  stage_id: r.stageId,
  run_id: r.runId,
  task_id: r.taskId,
  stage: r.stage,
  url: r.url,
  attempt: r.attempt,
  due_at: r.dueAt,
  lease_owner: r.leaseOwner,
  lease_expires_at: r.leaseExpiresAt,
  fencing_token: r.fencingToken,
  created_at: r.createdAt,
  delivered_at: r.deliveredAt,
  closed_at: r.closedAt,
  last_error: r.lastError,
  agent_pool_id: r.agentPoolId ?? null,
});
export const fromDeliveryRow = (row: DeliveryRow): TaskDeliveryRecord => ({
  id: row.id,
  taskResultId: row.task_result_id,
  stageId: row.stage_id,
  runId: row.run_id,
  taskId: row.task_id,
  stage: row.stage as RunStage,
  url: row.url,
  attempt: row.attempt,
  dueAt: row.due_at,
  leaseOwner: row.lease_owner,
  leaseExpiresAt: row.lease_expires_at,
  fencingToken: row.fencing_token,
  payload: row.payload,
  createdAt: row.created_at,
  deliveredAt: row.delivered_at,
  closedAt: row.closed_at,
  lastError: row.last_error,
  agentPoolId: row.agent_pool_id ?? null,
});
