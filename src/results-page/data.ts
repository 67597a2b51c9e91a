import { compareBySeverity, SEVERITY_RANK, severityOf, statusOf } from "../domain/outcomes.js";
import type { Workspace } from "../schemas/directory.js";
import type { RunRecord } from "../schemas/run-task-records.js";
import type { TagEntry } from "../schemas/run-tasks.js";
import type { OutcomeView, TaskResultView, TaskStageView } from "../schemas/task-stage-views.js";
import { loadDelivery, type DeliveryModel } from "./delivery.js";
import { notReached } from "./verdict.js";
import type { ResultsPageSource } from "./types.js";
import type { ResultAgentFacts } from "../services/pool-presence.js";

/** What the run page shows: stages, their results and each result's outcomes, filtered (D18). */

/** `?severity=` and `?status=` match the enriched tag's label, case-insensitively, like the API's filters. */
export interface OutcomeFilter {
  severity: string | null;
  status: string | null;
}

export interface ResultModel {
  result: TaskResultView;
  /** Outcomes passing the filter, most severe first. */
  shown: OutcomeView[];
  /** Outcomes loaded (at most the page's cap), and how many the result has. */
  loaded: number;
  total: number;
  /** decision D31: the request's state and attempts when its integration is failing, else null. */
  delivery: DeliveryModel | null;
  /** decision D34: the result's agent pool and agent, and why it waits; null for a direct result. */
  agent: ResultAgentFacts | null;
}

export interface RunPageModel {
  run: RunRecord;
  workspace: Workspace | null;
  stages: { stage: TaskStageView; results: ResultModel[] }[];
  filter: OutcomeFilter;
  /** The distinct labels of the enriched tags among the loaded outcomes, for the filter selects. */
  choices: { severity: TagEntry[]; status: TagEntry[] };
  /** decision D31: the caller may ask for a retry now (the API action's permission), so the button shows. */
  mayRetry: boolean;
  /** A one-line notice after an action, e.g. the retry's answer; null when none. */
  notice: string | null;
}

const PAGE = 100;
const MAX_FILTER_CHARS = 100;

export function parseFilter(query: URLSearchParams): OutcomeFilter {
  const read = (name: string): string | null => {
    const value = query.get(name)?.trim().slice(0, MAX_FILTER_CHARS) ?? "";
    return value === "" ? null : value;
  };
  return { severity: read("severity"), status: read("status") };
}

const matches = (entry: TagEntry | null, wanted: string | null): boolean =>
  wanted === null || (entry !== null && entry.label.toLowerCase() === wanted.toLowerCase());

/** Most severe level first, then alphabetical; one entry per case-insensitive label. */
function distinct(entries: (TagEntry | null)[]): TagEntry[] {
  const byLabel = new Map<string, TagEntry>();
  for (const entry of entries) {
    if (!entry) continue;
    const key = entry.label.toLowerCase();
    const seen = byLabel.get(key);
    if (!seen || SEVERITY_RANK[entry.level] > SEVERITY_RANK[seen.level]) byLabel.set(key, entry);
  }
  return [...byLabel.values()].sort((a, b) => SEVERITY_RANK[b.level] - SEVERITY_RANK[a.level] || a.label.localeCompare(b.label));
}

/** The outcomes of a result, most severe first, up to `max` (storage sorts, so the cap keeps the worst). */
async function loadOutcomes(source: ResultsPageSource, resultId: string, max: number): Promise<{ items: OutcomeView[]; total: number }> {
  const items: OutcomeView[] = [];
  let total = 0;
  while (items.length < max) {
    const limit = Math.min(PAGE, max - items.length);
    const page = await source.runTasks.listOutcomes(resultId, { page: { offset: items.length, limit }, sort: "severity" });
    total = page.total;
    items.push(...page.items);
    if (page.items.length < limit || items.length >= total) break;
  }
  // Stable, so equally severe outcomes keep the order the integration sent them in.
  return { items: items.sort(compareBySeverity), total };
}

export async function loadRunPage(
  source: ResultsPageSource,
  run: RunRecord,
  workspace: Workspace | null,
  filter: OutcomeFilter,
  maxOutcomesPerResult: number,
  extras: Pick<RunPageModel, "mayRetry" | "notice"> = { mayRetry: false, notice: null },
): Promise<RunPageModel> {
  const { items: stageViews } = await source.runTasks.listStages(run.id);
  const all: OutcomeView[] = [];
  const stages = await Promise.all(
    stageViews.map(async (stage) => {
      const results = await source.runTasks.listResults(stage.id);
      const models = await Promise.all(
        results.map(async (result): Promise<ResultModel> => {
          const [{ items, total }, delivery, agent] = await Promise.all([loadOutcomes(source, result.id, maxOutcomesPerResult), notReached(stage) ? null : loadDelivery(source, result), source.runTasks.agentFacts(result)]);
          all.push(...items);
          const shown = items.filter((o) => matches(severityOf(o.tags), filter.severity) && matches(statusOf(o.tags), filter.status));
          return { result, shown, loaded: items.length, total, delivery, agent };
        }),
      );
      return { stage, results: models };
    }),
  );
  return {
    run,
    workspace,
    stages,
    filter,
    choices: { severity: distinct(all.map((o) => severityOf(o.tags))), status: distinct(all.map((o) => statusOf(o.tags))) },
    ...extras,
  };
}
