import { existsSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

/**
 * A CPU profile of one measured window only (profile before optimising). With
 * BENCH_PROFILE_DIR set, the window's profile is written there as `<label>-<n>.cpuprofile`
 * (open it in Chrome DevTools or summarise it with `npx tsx bench/profile-summary.ts <file>`);
 * without it this costs nothing. `--cpu-prof` would also profile the set-up and the baseline.
 */
const dir = process.env.BENCH_PROFILE_DIR;
const interval = Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 100);
let count = 0;

export async function profileWindow(label: string): Promise<() => Promise<void>> {
  if (!dir) return async () => undefined;
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval });
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    // Numbered on from any file already there: several child servers may profile into one folder.
    let path = join(dir, `${label}-${++count}.cpuprofile`);
    while (existsSync(path)) path = join(dir, `${label}-${++count}.cpuprofile`);
    writeFileSync(path, JSON.stringify(profile));
    session.disconnect();
  };
}
