import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import type { Scenario, ScenarioResult } from "./scenarios/types.js";

/**
 * `npm run bench [name filter]`: every scenario, each as the median of SAMPLES runs with its
 * baseline measured in the same run. Writes bench/results/latest.json and prints a Markdown table.
 * Never part of `npm test`.
 */
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 5);
const filter = process.argv[2]?.toLowerCase();

/** Every module in bench/scenarios/ exports `scenarios`; the table follows ORDER (docs/performance.md's order). */
const ORDER = ["HTTP read", "HTTP read, Express", "HTTP write", "Callback ingest", "Fan-out", "Stage latency", "Steady state", "CPU per delivery", "Scale", "Resolver", "Memory"];
const rank = (name: string): number => {
  const i = ORDER.findIndex((o) => name.startsWith(o));
  return i === -1 ? ORDER.length : i;
};
const found: Scenario[] = [];
for (const file of readdirSync(new URL("./scenarios/", import.meta.url)).filter((f) => f.endsWith(".ts") && f !== "types.ts").sort()) {
  const mod = (await import(`./scenarios/${file.replace(/\.ts$/, ".js")}`)) as { scenarios?: Scenario[] };
  found.push(...(mod.scenarios ?? []));
}
const scenarios = found
  .filter((s) => !filter || s.name.toLowerCase().includes(filter))
  .sort((a, b) => rank(a.name) - rank(b.name));

const fmt = (n: number): string => (n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(2));
const results: (ScenarioResult & { wallSeconds: number })[] = [];
const started = performance.now();
for (const scenario of scenarios) {
  process.stderr.write(`bench: ${scenario.name}...\n`);
  const t0 = performance.now();
  const produced = [await scenario.run(SAMPLES)].flat();
  for (const row of produced) results.push({ ...row, wallSeconds: Math.round((performance.now() - t0) / 100) / 10 });
}
const wallSeconds = Math.round((performance.now() - started) / 1000);

const rows = results.map((r) =>
  [
    r.name,
    `${fmt(r.subject.median)} ${r.unit} (${fmt(r.subject.min)}-${fmt(r.subject.max)})`,
    r.baseline ? `${fmt(r.baseline.median)} ${r.unit} (${fmt(r.baseline.min)}-${fmt(r.baseline.max)})` : "-",
    r.ratio === undefined ? "-" : r.ratio.toFixed(2),
    r.target ?? "-",
    r.met === undefined ? "" : r.met ? "met" : "MISSED",
    r.notes ?? "",
  ].join(" | "),
);
const table = [
  "| scenario | median (min-max) | baseline median (min-max) | ratio | target | | notes |",
  "|---|---|---|---|---|---|---|",
  ...rows.map((r) => `| ${r} |`),
].join("\n");

// A filtered run is a development run: it never replaces the full run's record.
const file = filter ? "./results/partial.json" : "./results/latest.json";
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
writeFileSync(
  new URL(file, import.meta.url),
  JSON.stringify({ at: new Date().toISOString(), node: process.version, cpus: cpus().length, samples: SAMPLES, wallSeconds, filter, results }, null, 2),
);
process.stdout.write(`${table}\n\n${results.length} scenarios, ${SAMPLES} samples each, ${wallSeconds} s on ${cpus().length} cores (Node ${process.version}).\n`);
