/**
 * What the key rotation test (key-rotation.test.ts) needs around its reference hosts: each host's
 * keyring.json written as the README says (whole, by rename), and an integration that fails the
 * first attempts of every request (so deliveries are being retried throughout the rotation), holds
 * some until told, then answers 200 and reports `passed` through the callback.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createCallbackClient } from "../../src/integration/index.js";
import type { KeyringOptions } from "../../src/index.js";
import { startReceiver, type Receiver } from "../delivery/processes.js";

export function writeKeyring(dataDir: string, keyring: KeyringOptions): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const temporary = join(dataDir, "keyring.json.tmp");
  writeFileSync(temporary, JSON.stringify(keyring), { mode: 0o600 });
  renameSync(temporary, join(dataDir, "keyring.json"));
}

export interface FlakyIntegration {
  receiver: Receiver;
  /** Results answered 503 until `release()`, whatever their attempt. */
  held: Set<string>;
  release(): void;
  /** Callbacks that failed (none expected). */
  callbackErrors: string[];
}

/** Answers 503 to the first `failures` attempts of each result (and to held ones), then 200 and a `passed` callback. */
export async function flakyIntegration(failures = 2): Promise<FlakyIntegration> {
  const held = new Set<string>();
  const callbackErrors: string[] = [];
  const callbacks = createCallbackClient();
  let released = false;
  let receiver: Receiver | undefined;
  receiver = await startReceiver({
    "/task": (body) => {
      const id = String(body.task_result_id);
      const attempts = receiver!.posts.get(id)?.length ?? 0;
      if ((held.has(id) && !released) || attempts <= failures) return 503;
      // After the 200 has been answered, as an integration reports a finished check.
      setTimeout(() => void callbacks.send(body as never, { status: "passed", message: "checked" }).catch((e: unknown) => callbackErrors.push(String(e))), 100);
      return 200;
    },
  });
  return { receiver, held, release: () => void (released = true), callbackErrors };
}
