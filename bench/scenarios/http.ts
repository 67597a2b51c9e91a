import { startServer } from "../lib/child-server.js";
import { requestsPerSecond } from "../lib/http-load.js";
import { alternate } from "../lib/stats.js";
import type { Scenario, ScenarioResult } from "./types.js";

const LIST = "/api/v2/workspaces/ws-bench/vars";

/** A runplane list through a framework mount against the same framework returning the same bytes. */
function readScenario(name: string, framework: "hono" | "express"): Scenario {
  return {
    name,
    async run(samples): Promise<ScenarioResult> {
      const subject = await startServer(`${framework}-runplane-sqlite`);
      const baseline = await startServer(`${framework}-fixed-sqlite`);
      try {
        const load = (url: string, token: string) => () => requestsPerSecond({ url: `${url}${LIST}`, headers: { authorization: `Bearer ${token}` } });
        const r = await alternate(samples, load(subject.url, subject.info.token!), load(baseline.url, baseline.info.token!));
        const ratio = r.subject.median / r.baseline.median;
        return { name, unit: "req/s", ...r, ratio, target: ">= 0.60", met: ratio >= 0.6, notes: `${subject.info.bodyBytes} byte body, 50 connections` };
      } finally {
        await Promise.all([subject.stop(), baseline.stop()]);
      }
    },
  };
}

/** POST then DELETE a sensitive variable (sealed on write): SQLite file against the memory adapter. */
const write: Scenario = {
  name: "HTTP write",
  async run(samples): Promise<ScenarioResult> {
    const subject = await startServer("hono-runplane-sqlite");
    const baseline = await startServer("hono-runplane-memory");
    try {
      const load = (url: string, token: string) => () =>
        requestsPerSecond({
          url,
          connections: 10,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/vnd.api+json" },
          requests: [
            {
              method: "POST",
              path: LIST,
              // A fresh key per request: `[<id>]` is not available per request here, so use the context counter.
              setupRequest: (req, context) => {
                const n = ((context.n as number | undefined) ?? 0) + 1;
                context.n = n;
                const key = `k_${process.hrtime.bigint()}_${n}`;
                return { ...req, body: JSON.stringify({ data: { type: "vars", attributes: { key, value: "secret", category: "env", sensitive: true } } }) };
              },
              onResponse: (_status, body, context) => {
                context.id = (JSON.parse(body) as { data: { id: string } }).data.id;
              },
            },
            { method: "DELETE", setupRequest: (req, context) => ({ ...req, path: `${LIST}/${String(context.id)}` }) },
          ],
        });
      const r = await alternate(samples, load(subject.url, subject.info.token!), load(baseline.url, baseline.info.token!));
      const ratio = r.subject.median / r.baseline.median;
      return { name: "HTTP write", unit: "req/s", ...r, ratio, target: ">= 0.50", met: ratio >= 0.5, notes: "POST+DELETE of a sensitive variable, SQLite file (synchronous FULL) vs memory" };
    } finally {
      await Promise.all([subject.stop(), baseline.stop()]);
    }
  },
};

export const scenarios: Scenario[] = [readScenario("HTTP read", "hono"), readScenario("HTTP read, Express", "express"), write];
