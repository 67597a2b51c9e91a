import Database from "better-sqlite3";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { createRunplane, silentLogger } from "../../src/index.js";
import { newId } from "../../src/crypto/random.js";
import { impliedPermissions } from "../../src/domain/permissions.js";
import type { RunRecord, TaskResultRecord, TaskStageRecord } from "../../src/schemas/run-task-records.js";
import { RUN_STAGES } from "../../src/schemas/run-tasks.js";
import type { AccessLevel } from "../../src/schemas/team-projects.js";

/**
 * A SQLite file for the Scale scenario: a measured run (4 stages, 2 results each) and a measured
 * project (10 team grants) created through runplane's own services and storage, plus filler rows
 * inserted straight into the adapter's tables until `task_stages` and `team_projects` each hold
 * exactly `rows` rows. Going through the services would take hours at a million rows.
 */
export interface ScaleFile {
  path: string;
  rows: number;
  keyringKey: string;
  token: string;
  runId: string;
  projectId: string;
}

export const MEASURED_STAGES = RUN_STAGES.length;
export const MEASURED_RESULTS_PER_STAGE = 2;
export const MEASURED_GRANTS = 10;

const ORG = "scale";
const LEVELS: AccessLevel[] = ["read", "write", "maintain", "admin", "read", "write", "read", "maintain", "read", "write"];

const iso = (ms: number): string => new Date(ms).toISOString();

/** Creates `path` with runplane, then fills it; returns what the measurements need. */
export async function seedScaleFile(path: string, rows: number, keyringKey: string): Promise<ScaleFile> {
  if (rows < MEASURED_GRANTS || rows < MEASURED_STAGES) throw new Error(`seedScaleFile: rows must be at least ${MEASURED_GRANTS}`);
  const measured = await seedMeasured(path, keyringKey);
  const sample = fill(path, rows);
  if (sample) await checkFiller(path, sample);
  return { path, rows, keyringKey, ...measured };
}

/** Filler written by SQL must still read back through the adapter's row readers. */
async function checkFiller(path: string, sample: { runId: string; projectId: string }): Promise<void> {
  const storage = createSqliteStorage(new Database(path));
  try {
    const stages = (await storage.taskStages.listByRun(sample.runId)).items;
    const results = await Promise.all(stages.map((st) => storage.taskResults.listByStage(st.id)));
    const grants = await storage.teamProjects.listByProject(sample.projectId, {}, { offset: 0, limit: 100 });
    const ok =
      stages.length === MEASURED_STAGES &&
      stages.every((st, i) => st.sequence === i && st.status === "passed" && st.statusTimestamps["passed-at"]?.endsWith("Z")) &&
      results.every((list, i) => list.length === 1 + (i % 2) && list.every((r) => r.stageId === stages[i]!.id && r.status === "passed")) &&
      grants.total === MEASURED_GRANTS &&
      grants.items.every((g) => g.projectId === sample.projectId && typeof g.projectAccess === "object");
    if (!ok) throw new Error(`seed: filler rows of ${path} do not read back as written`);
  } finally {
    await storage.close();
  }
}

async function seedMeasured(path: string, keyringKey: string): Promise<Omit<ScaleFile, "path" | "rows" | "keyringKey">> {
  const storage = createSqliteStorage(new Database(path));
  const runplane = createRunplane({ storage, logger: silentLogger, keyring: { keys: [{ id: "k", key: keyringKey }] } });
  try {
    const d = runplane.directory;
    await d.organizations.create({ name: ORG });
    const project = await d.projects.create({ name: "scale-project", organization: ORG });
    const workspace = await d.workspaces.create({ name: "scale-ws", organization: ORG, projectId: project.id });
    // A non-owner team with admin on the project: every request resolves its grant from team_projects.
    const teams = [];
    for (let i = 0; i < MEASURED_GRANTS; i++) teams.push(await d.teams.create({ name: `team-${i}`, organization: ORG }));
    for (const [i, team] of teams.entries()) await runplane.teamProjects.create(project.id, team.id, { access: LEVELS[i]! });
    const admin = teams[LEVELS.indexOf("admin")]!;
    const { token } = await d.createApiToken({ organization: ORG, kind: "team", teamId: admin.id, description: "scale" });
    const runId = await storeMeasuredRun(storage, workspace.id, workspace.organization);
    return { token, runId, projectId: project.id };
  } finally {
    await runplane.close();
  }
}

/** A finished run through the adapter's own write path, as if its four stages had passed. */
async function storeMeasuredRun(storage: ReturnType<typeof createSqliteStorage>, workspaceId: string, organization: string): Promise<string> {
  const now = Date.now();
  const run = runRecord(newId("run"), workspaceId, organization, now);
  const stages = RUN_STAGES.map((_, sequence) => stageRecord(newId("ts"), run, sequence, now));
  const results = stages.flatMap((st) =>
    Array.from({ length: MEASURED_RESULTS_PER_STAGE }, (_, position) => resultRecord(newId("taskrs"), st, position, `task-${position}`, now)),
  );
  if (!(await storage.runs.create(run, stages, results))) throw new Error("seed: the measured run already exists");
  return run.id;
}

const runRecord = (id: string, workspaceId: string, organization: string, at: number): RunRecord => ({
  id,
  organization,
  workspaceId,
  message: "scale",
  createdBy: "user-scale",
  createdAt: iso(at),
  isSpeculative: false,
  configurationVersionId: "cv-scale",
  configurationVersionDownloadable: true,
  applyId: `apply-${id}`,
  planId: "plan-scale",
  vcs: null,
});

const passedAt = (at: number) => ({ "pending-at": iso(at), "running-at": iso(at + 1000), "passed-at": iso(at + 5000) });

const stageRecord = (id: string, run: RunRecord, sequence: number, at: number): TaskStageRecord => ({
  id,
  runId: run.id,
  workspaceId: run.workspaceId,
  organization: run.organization,
  stage: RUN_STAGES[sequence]!,
  sequence,
  status: "passed",
  statusTimestamps: passedAt(at + sequence * 10_000),
  overridden: false,
  overrideComment: null,
  version: 3,
  createdAt: iso(at),
  updatedAt: iso(at + sequence * 10_000 + 5000),
});

const resultRecord = (id: string, stage: TaskStageRecord, position: number, taskId: string, at: number): TaskResultRecord => ({
  id,
  stageId: stage.id,
  runId: stage.runId,
  workspaceId: stage.workspaceId,
  organization: stage.organization,
  stage: stage.stage,
  position,
  status: "passed",
  message: "No findings",
  url: "https://scanner.example/results/1",
  statusTimestamps: passedAt(at + stage.sequence * 10_000),
  taskId,
  taskName: `scanner-${position}`,
  taskUrl: "https://scanner.example/run-task",
  workspaceTaskId: `wstask-${taskId}`,
  enforcementLevel: position === 0 ? "mandatory" : "advisory",
  isSpeculative: false,
  outcomesCount: 0,
  accessTokenDigest: null,
  deadlineAt: null,
  deadlineMaxAt: null,
  version: 3,
  createdAt: iso(at),
  updatedAt: iso(at + stage.sequence * 10_000 + 5000),
});

/**
 * Filler in one transaction on a private connection, generated inside SQLite (INSERT ... SELECT over
 * a counter): binding a million rows one by one from JS took three times as long. Other runs hold 4
 * passed stages each with alternately 1 and 2 results, over 1,000 workspaces; other projects hold
 * grants of 10 teams from a pool of 1,000; timestamps spread over the past year. Ids look like the
 * core's (`<prefix>-<16 chars>`, D9; hex is a subset of base62). The file is throwaway, so the
 * journal is off while filling; the adapter's WAL mode is back before anyone reads it.
 */
function fill(path: string, rows: number): { runId: string; projectId: string } | null {
  const db = new Database(path);
  try {
    db.pragma("journal_mode = DELETE");
    db.pragma("journal_mode = OFF");
    db.pragma("synchronous = OFF");
    db.pragma("cache_size = -1000000");
    db.pragma("temp_store = MEMORY");
    const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    const stages = rows - count("task_stages");
    const grants = rows - count("team_projects");
    const year = 365 * 86_400;
    const start = Date.now() / 1000 - year;
    const sample = db.transaction(() => {
      db.exec(FILLER_TABLES);
      const runs = Math.ceil(stages / MEASURED_STAGES);
      db.prepare(FILLER_SQL.runs).run({ runs, start, step: year / Math.max(1, runs) });
      if (stages > 0) {
        db.prepare(FILLER_SQL.runRows).run();
        db.prepare(FILLER_SQL.stages).run({ stages });
        db.prepare(FILLER_SQL.results).run();
      }
      const levels = db.prepare(`INSERT INTO temp.filler_levels VALUES (?, ?, ?, ?)`);
      LEVELS.forEach((access, k) => {
        const p = impliedPermissions(access);
        levels.run(k, access, JSON.stringify(p.projectAccess), JSON.stringify(p.workspaceAccess));
      });
      db.prepare(FILLER_SQL.teams).run({ teams: TEAM_POOL });
      const projects = Math.ceil(grants / MEASURED_GRANTS);
      db.prepare(FILLER_SQL.projects).run({ projects, teams: TEAM_POOL });
      // The counter always yields n = 0, so an empty fill must not run it.
      if (grants > 0) db.prepare(FILLER_SQL.grants).run({ grants, teams: TEAM_POOL, start, step: year / Math.max(1, grants) });
      const first = (table: string) => (db.prepare(`SELECT id FROM temp.${table} WHERE n = 0`).get() as { id: string } | undefined)?.id;
      const runId = first("filler_runs");
      const projectId = first("filler_projects");
      db.exec(`DROP TABLE temp.filler_runs; DROP TABLE temp.filler_levels; DROP TABLE temp.filler_teams; DROP TABLE temp.filler_projects;`);
      return runId && projectId && stages >= MEASURED_STAGES && grants >= MEASURED_GRANTS ? { runId, projectId } : null;
    })();
    db.pragma("journal_mode = WAL");
    if (count("task_stages") !== rows || count("team_projects") !== rows) throw new Error(`seed: ${path} does not hold ${rows} rows`);
    return sample;
  } finally {
    db.close();
  }
}

const TEAM_POOL = 1000;

const FILLER_TABLES = `
  CREATE TEMP TABLE filler_runs (n INTEGER PRIMARY KEY, id TEXT NOT NULL, workspace_id TEXT NOT NULL, at REAL NOT NULL);
  CREATE TEMP TABLE filler_levels (k INTEGER PRIMARY KEY, access TEXT NOT NULL, project_access TEXT NOT NULL, workspace_access TEXT NOT NULL);
  CREATE TEMP TABLE filler_teams (n INTEGER PRIMARY KEY, id TEXT NOT NULL);
  CREATE TEMP TABLE filler_projects (n INTEGER PRIMARY KEY, id TEXT NOT NULL, first_team INTEGER NOT NULL);
`;

/** ISO-8601 with milliseconds and `Z`, as the core writes them, from unix seconds. */
const ts = (seconds: string): string => `strftime('%Y-%m-%dT%H:%M:%fZ', ${seconds}, 'unixepoch')`;
const counter = (limit: string): string => `WITH RECURSIVE k(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n + 1 < ${limit})`;
const randomId = (prefix: string): string => `'${prefix}-' || hex(randomblob(8))`;

const FILLER_SQL = {
  runs: `${counter("@runs")} INSERT INTO temp.filler_runs
    SELECT n, ${randomId("run")}, printf('ws-filler%011d', n % 1000), @start + n * @step FROM k`,
  runRows: `INSERT INTO runs (id, organization, workspace_id, message, created_by, created_at, is_speculative,
      configuration_version_id, configuration_version_downloadable, plan_id, vcs)
    SELECT id, '${ORG}', workspace_id, 'scale', 'user-scale', ${ts("at")}, 0, 'cv-scale', 1, 'plan-scale', NULL
    FROM temp.filler_runs ORDER BY n`,
  stages: `WITH seq(s, stage) AS (VALUES ${RUN_STAGES.map((stage, s) => `(${s}, '${stage}')`).join(", ")})
    INSERT INTO task_stages (id, run_id, workspace_id, organization, stage, sequence, status, status_timestamps,
      overridden, override_comment, version, created_at, updated_at)
    SELECT ${randomId("ts")}, r.id, r.workspace_id, '${ORG}', seq.stage, seq.s, 'passed',
      json_object('pending-at', ${ts("r.at + s * 10")}, 'running-at', ${ts("r.at + s * 10 + 1")}, 'passed-at', ${ts("r.at + s * 10 + 5")}),
      0, NULL, 3, ${ts("r.at")}, ${ts("r.at + s * 10 + 5")}
    FROM temp.filler_runs AS r CROSS JOIN seq ORDER BY r.n, seq.s LIMIT @stages`,
  results: `WITH pos(p) AS (VALUES (0), (1))
    INSERT INTO task_results (id, stage_id, run_id, workspace_id, organization, stage, position, status, message, url,
      status_timestamps, task_id, task_name, task_url, workspace_task_id, enforcement_level, is_speculative,
      outcomes_count, access_token_digest, deadline_at, deadline_max_at, version, created_at, updated_at)
    SELECT ${randomId("taskrs")}, st.id, st.run_id, st.workspace_id, st.organization, st.stage, pos.p, 'passed',
      'No findings', 'https://scanner.example/results/1', st.status_timestamps, 'task-' || pos.p, 'scanner-' || pos.p,
      'https://scanner.example/run-task', 'wstask-task-' || pos.p, CASE pos.p WHEN 0 THEN 'mandatory' ELSE 'advisory' END,
      0, 0, NULL, NULL, NULL, 3, st.created_at, st.updated_at
    FROM temp.filler_runs AS r JOIN task_stages AS st ON st.run_id = r.id JOIN pos ON pos.p <= st.sequence % 2
    ORDER BY r.n, st.sequence, pos.p`,
  teams: `${counter("@teams")} INSERT INTO temp.filler_teams SELECT n, ${randomId("team")} FROM k`,
  projects: `${counter("@projects")} INSERT INTO temp.filler_projects
    SELECT n, ${randomId("prj")}, abs(random() % @teams) FROM k`,
  // Ten consecutive pool teams per project keep every (team, project) pair unique.
  grants: `${counter("@grants")} INSERT INTO team_projects (id, team_id, project_id, organization, access, project_access,
      workspace_access, created_at, updated_at)
    SELECT ${randomId("tprj")}, t.id, p.id, '${ORG}', l.access, l.project_access, l.workspace_access,
      ${ts("@start + k.n * @step")}, ${ts("@start + k.n * @step")}
    FROM k JOIN temp.filler_projects AS p ON p.n = k.n / ${MEASURED_GRANTS}
      JOIN temp.filler_levels AS l ON l.k = k.n % ${MEASURED_GRANTS}
      JOIN temp.filler_teams AS t ON t.n = (p.first_team + k.n % ${MEASURED_GRANTS}) % @teams
    ORDER BY k.n`,
} as const;
