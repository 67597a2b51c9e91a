import { createHash, randomBytes } from "node:crypto";
import type { Task } from "graphile-worker";
import { Agent, request } from "undici";
import { buildRunTaskRequest, runTaskRequestHeaders, serializeRunTaskRequest, type RunTaskRequestInput, type RunTaskUrls } from "../../src/domain/run-task-request.js";

/**
 * The peer doing the same work: the graphile-worker task a user would write instead of
 * runplane's outbox. Per result it builds the run task request with runplane's pure builder (the
 * same payload, spec 4.1), makes an access token (32 random bytes) and stores its SHA-256 digest so
 * a callback could be checked, signs the bytes (HMAC-SHA512), POSTs them with undici and records
 * the result's status. Nothing else: no sealed payload, no attempt history, no deadline, no events.
 */

/** The run as the user's application holds it when a stage starts; it travels in the job. */
export type PeerRun = RunTaskRequestInput["run"] & { configurationVersionId: string };

export interface PeerJob {
  resultId: string;
  /** Index into {@link PeerConfig.tasks}. */
  task: number;
  run: PeerRun;
}

export interface PeerConfig {
  /** The results table, schema-qualified and quoted. */
  table: string;
  urls: RunTaskUrls;
  organization: string;
  workspace: { id: string; name: string; workingDirectory: string };
  downloadable: boolean;
  userAgent: string;
  tasks: { url: string; hmacKey: string }[];
  /** Called on each 200, before the status is recorded (where runplane's transport counts). */
  onOk(): void;
}

/** The user's results table: one row per task result, pending until its request got a 200. */
export const peerTableDdl = (table: string): string => `
  CREATE TABLE IF NOT EXISTS ${table} (
    id text PRIMARY KEY,
    run_id text NOT NULL,
    position integer NOT NULL,
    status text NOT NULL,
    access_token_digest text,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`;

export function peerRunTask(config: PeerConfig): { task: Task; close(): Promise<void> } {
  const agent = new Agent({ keepAliveTimeout: 60_000 });
  const task: Task = async (payload, helpers) => {
    const job = payload as PeerJob;
    const target = config.tasks[job.task]!;
    // Stored before sending: the integration may call back before the POST returns.
    const token = randomBytes(32).toString("base64url");
    const digest = createHash("sha256").update(token).digest("hex");
    await helpers.query(`UPDATE ${config.table} SET access_token_digest = $2, updated_at = now() WHERE id = $1 AND status = 'pending'`, [job.resultId, digest]);
    const bytes = serializeRunTaskRequest(
      buildRunTaskRequest({
        stage: "post_plan",
        accessToken: token,
        urls: config.urls,
        organizationName: config.organization,
        run: job.run,
        configurationVersion: { id: job.run.configurationVersionId, downloadable: config.downloadable },
        workspace: config.workspace,
        vcs: null,
        taskResult: { id: job.resultId, enforcementLevel: "mandatory" },
      }),
    );
    const headers = runTaskRequestHeaders({ bytes, key: target.hmacKey, dialect: "default", userAgent: config.userAgent });
    const res = await request(target.url, { dispatcher: agent, method: "POST", headers, body: bytes });
    await res.body.dump();
    // Anything but a 200 fails the job; graphile-worker retries it.
    if (res.statusCode !== 200) throw new Error(`integration answered ${res.statusCode}`);
    config.onOk();
    await helpers.query(`UPDATE ${config.table} SET status = 'running', updated_at = now() WHERE id = $1`, [job.resultId]);
  };
  return { task, close: () => agent.close() };
}
