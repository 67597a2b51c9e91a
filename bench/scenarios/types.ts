import type { Series } from "../lib/stats.js";

export interface ScenarioResult {
  name: string;
  unit: string;
  subject: Series;
  /** Absent for absolute scenarios (reported, no baseline). */
  baseline?: Series;
  /**
   * subject.median / baseline.median. For a cost (µs, MB) the target reads `<= x`: the subject may
   * cost at most x times the baseline.
   */
  ratio?: number;
  target?: string;
  met?: boolean;
  notes?: string;
}

export interface Scenario {
  name: string;
  /** One row, or several when one rig measures several gauges (each row its own target). */
  run(samples: number): Promise<ScenarioResult | ScenarioResult[]>;
}
