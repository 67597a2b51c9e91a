import { runAgent } from "../agent/index.js";
import { parse } from "./args.js";

/** The agent's own flags: [flag, value, what]. */
export const AGENT_FLAGS = [
  ["url", "<origin>", "the runplane origin to connect to, e.g. https://runplane.example.com (or RUNPLANE_URL)"],
  ["token", "<agent token>", "an agent token of the pool (better: RUNPLANE_AGENT_TOKEN, which ps does not show)"],
  ["name", "<name>", "what the agent is called in the Agents API (default: the host name)"],
  ["allow", "<cidr,...>", "destinations the agent may reach besides public addresses, comma-separated (default: loopback and the private ranges; link-local and metadata addresses only when named)"],
  ["concurrency", "<n>", "requests at once, each a waiting poll (default 1)"],
] as const;

/**
 * `runplane agent --url <origin> --token <agent token> [--name n] [--allow <cidr,...>]
 * [--concurrency n]` (decision D34): carries the run task requests of the token's pool from
 * inside a private network. Outbound only; SIGTERM or SIGINT stops it cleanly (deregistered).
 * Resolves false (exit 1) when runplane refused the token.
 */
export async function agent(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const { values, positionals } = parse(args, Object.fromEntries(AGENT_FLAGS.map(([flag]) => [flag, { type: "string" as const }])), false);
  if (positionals.length > 0) throw new Error(`unexpected argument ${positionals[0]} (--help lists the flags)`);
  const url = (values.url as string | undefined) ?? env.RUNPLANE_URL;
  const token = (values.token as string | undefined) ?? env.RUNPLANE_AGENT_TOKEN;
  if (!url || !/^https?:\/\//.test(url)) throw new Error("--url (or RUNPLANE_URL) must be the runplane origin, http:// or https://");
  if (!token) throw new Error("--token or RUNPLANE_AGENT_TOKEN is required: an agent token of the pool");
  const concurrency = values.concurrency === undefined ? 1 : Number(values.concurrency);
  if (!Number.isSafeInteger(concurrency) || concurrency < 1 || concurrency > 256) throw new Error("--concurrency must be an integer from 1 to 256");
  const allow = typeof values.allow === "string" ? values.allow.split(",").map((e) => e.trim()).filter((e) => e !== "") : undefined;
  const handle = runAgent({ url, token, concurrency, ...(typeof values.name === "string" ? { name: values.name } : {}), ...(allow ? { allow } : {}) });
  const stop = (): void => void handle.stop();
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  try {
    return (await handle.done) === "stopped";
  } finally {
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
  }
}
