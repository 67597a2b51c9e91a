import { readFileSync } from "node:fs";

/**
 * Summarises `.cpuprofile` files (bench/lib/profile-window.ts, `--cpu-prof`): self time by
 * function and by where the code lives, and inclusive time of runplane's own functions, so a
 * before/after in the profiling record reads the same way each time.
 * Usage: npx tsx bench/profile-summary.ts <file.cpuprofile>... [--top N]
 */
interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const topAt = args.indexOf("--top");
const top = topAt >= 0 ? Number(args[topAt + 1]) : 40;
const files = args.filter((a, i) => a !== "--top" && (topAt < 0 || i !== topAt + 1));

function where(url: string): string {
  if (url === "") return "(native/gc)";
  if (url.startsWith("node:")) return url.split("/")[0]!.replace(/^node:internal.*/, "node:internal");
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) return url.slice(nm + 13).split("/").slice(0, url.slice(nm + 13).startsWith("@") ? 2 : 1).join("/");
  const m = /\/(src|adapters|bench)\/(.*)$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : url;
}

const self = new Map<string, number>();
const byPlace = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
for (const file of files) {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const timeOf = new Map<number, number>();
  p.samples.forEach((id, i) => timeOf.set(id, (timeOf.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  for (const [id, us] of timeOf) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    if (functionName === "(idle)") continue;
    total += us;
    const place = where(url);
    const key = `${functionName || "(anonymous)"} ${place}:${lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + us);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
    // Inclusive time of runplane's own frames: each frame on the stack once.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (!/\/(src|adapters)\//.test(f.url)) continue;
      const k = `${f.functionName || "(anonymous)"} ${where(f.url)}:${f.lineNumber + 1}`;
      if (!seen.has(k)) seen.add(k), inclusive.set(k, (inclusive.get(k) ?? 0) + us);
    }
  }
}
const show = (title: string, m: Map<string, number>): void => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((us / total) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
};
console.log(`${files.length} profile(s), ${(total / 1000).toFixed(0)} ms sampled (idle excluded)`);
show("self time by place", byPlace);
show("self time by function", self);
show("inclusive time of runplane's functions", inclusive);
