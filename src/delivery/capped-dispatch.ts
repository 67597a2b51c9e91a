import type { Agent, Dispatcher } from "undici";
import type { HttpResponse } from "./transport.js";

/** Ends an attempt whose body passed the cap: undici then drops the socket, so the rest is never read. */
class BodyCapped extends Error {}

/**
 * One exchange through undici's dispatch handler rather than `request()`: no response stream, no
 * AbortSignal (a signal per request cost about 20 us of CPU here, a quarter of a whole POST), the
 * body kept up to `max` bytes as it arrives. `abort` ends it at once, whether or not undici
 * has started it yet. Redirects come back as they are: dispatch never follows them (D15).
 */
export function dispatchCapped(agent: Agent, url: URL, method: string, headers: Record<string, string>, body: Uint8Array | string, max: number) {
  let controller: Dispatcher.DispatchController | null = null;
  let stopped: Error | null = null;
  let fail: (error: unknown) => void = () => undefined;
  const done = new Promise<HttpResponse>((resolve, reject) => {
    fail = reject;
    let status = 0;
    let responseHeaders: Record<string, string> = {};
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    const finish = (): void => {
      resolve({ status, headers: responseHeaders, body: new TextDecoder().decode(Buffer.concat(chunks, size)), bodyTruncated: truncated });
    };
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (stopped) c.abort(stopped);
      },
      onResponseStart(_c, statusCode, received) {
        // 1xx informational answers come first; only the final status and its headers count.
        if (statusCode < 200) return;
        status = statusCode;
        responseHeaders = flattenHeaders(received as Record<string, string | string[] | undefined>);
      },
      onResponseData(c, chunk) {
        if (truncated) return;
        const room = max - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          size = max;
          truncated = true;
          c.abort(new BodyCapped());
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      },
      onResponseEnd: finish,
      onResponseError(_c, error) {
        if (truncated) finish();
        else reject(error);
      },
    };
    try {
      agent.dispatch({ origin: url.origin, path: `${url.pathname}${url.search}`, method, headers, body }, handler);
    } catch (error) {
      reject(error);
    }
  });
  return {
    done,
    abort(reason: Error): void {
      if (stopped) return;
      stopped = reason;
      controller?.abort(reason);
      fail(reason);
    },
  };
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}
