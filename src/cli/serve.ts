import { parse } from "./args.js";

/**
 * `runplane serve`: the reference server (examples/server/main.ts), configured by flags or by the
 * environment. Its startup errors (port taken, data directory locked) reach main.ts's one-line report.
 */
export async function serve(args: string[]): Promise<void> {
  const { env } = parse(args);
  Object.assign(process.env, env);
  await import("../../examples/server/main.js");
}
