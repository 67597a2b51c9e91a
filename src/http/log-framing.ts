import type { Dialect } from "../schemas/common.js";
import type { CheckedRunDetails } from "../schemas/run-details.js";

/**
 * decision D48: HCP Terraform's log stream framing. A log read at `log-read-url` starts with STX
 * (0x02) and, once its plan or apply is final, ends with ETX (0x03). go-tfe's log reader drops
 * both (counting them in its offsets) and stops reading once it saw ETX and the phase's status is
 * final; without STX it asks for the status after every empty read. Only in the hcp-terraform
 * dialect: other readers get the host's bytes as they are.
 */

const STX = new Uint8Array([0x02]);
const ETX = new Uint8Array([0x03]);

/** The statuses after which a plan or apply writes nothing more (go-tfe's log reader stops on them). */
export const FINAL_PHASE_STATUSES: readonly string[] = ["finished", "errored", "canceled", "unreachable"];

/**
 * Whether the log of `kind` is complete: the host says its phase is final, or gives no status at
 * all (its log is then taken as whole, as it was given).
 */
export function logComplete(details: CheckedRunDetails | null, kind: "plan" | "apply"): boolean {
  const status = details?.[kind]?.status;
  return status === undefined || FINAL_PHASE_STATUSES.includes(status);
}

const joined = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
};

/**
 * The host's log with STX before its first byte and, when `complete`, ETX after its last. STX
 * travels with the first chunk: a reader that got STX alone would wait a poll for nothing. Streamed,
 * so a large log is never held whole.
 */
export function framedLog(response: Response, complete: boolean, dialect: Dialect): Response {
  if (dialect !== "hcp-terraform") return response;
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  const reader = response.body?.getReader();
  let first = true;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = reader ? await reader.read() : { done: true as const, value: undefined };
      if (next.done) {
        const tail = complete ? ETX : new Uint8Array(0);
        const last = first ? joined(STX, tail) : tail;
        if (last.byteLength > 0) controller.enqueue(last);
        controller.close();
        return;
      }
      controller.enqueue(first ? joined(STX, next.value) : next.value);
      first = false;
    },
    async cancel() {
      await reader?.cancel().catch(() => undefined);
    },
  });
  return new Response(body, { status: response.status, headers });
}
