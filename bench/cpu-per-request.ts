import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import { startServer } from "./lib/child-server.js";

/** Dev tool: server CPU time per request (utime+stime of the server process), robust to a busy machine. */
const modes = process.argv.slice(2);
const ticks = (pid: number): number => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return Number(f[11]) + Number(f[12]);
};
for (const mode of modes) {
  const s = await startServer(mode);
  const url = `${s.url}${s.info.listPath}`;
  const run = (amount: number) => autocannon({ url, connections: 50, amount, headers: { authorization: `Bearer ${s.info.token}` } });
  await run(3000);
  const out: string[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = ticks(s.child.pid!);
    const r = await run(10000);
    const us = ((ticks(s.child.pid!) - t0) * 10_000) / r["2xx"];
    out.push(`${us.toFixed(1)}`);
  }
  console.log(mode.padEnd(24), "µs CPU/request:", out.join(" "));
  await s.stop();
}
