import autocannon from "autocannon";

export interface LoadOptions {
  url: string;
  connections?: number;
  durationSeconds?: number;
  headers?: Record<string, string>;
  requests?: autocannon.Request[];
}

/** Successful (2xx) requests per second over one autocannon run. */
export async function requestsPerSecond(options: LoadOptions): Promise<number> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections ?? 50,
    duration: options.durationSeconds ?? 2,
    headers: options.headers ?? {},
    ...(options.requests ? { requests: options.requests } : {}),
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`load run had ${result.non2xx} non-2xx responses and ${result.errors} errors`);
  }
  return result["2xx"] / (result.duration || 1);
}
