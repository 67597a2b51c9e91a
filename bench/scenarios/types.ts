import type { Series } from "../lib/stats.js";

export interface ScenarioResult {
  name: string;
  unit: string;
  subject: Series;
  /** Absent for absolute scenarios (reported, no baseline). */
  baseline?: Series;
  /** subject.median / baseline.median (for "lower is better" units, baseline / subject). */
  ratio?: number;
  target?: string;
  met?: boolean;
  notes?: string;
}

export interface Scenario {
  name: string;
  run(samples: number): Promise<ScenarioResult>;
}
