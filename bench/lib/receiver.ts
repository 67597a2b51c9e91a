import { fileURLToPath } from "node:url";
import { startServer, type ChildServer } from "./child-server.js";

const RECEIVER = fileURLToPath(new URL("../servers/receiver.ts", import.meta.url));
const DELIVERY_SERVER = fileURLToPath(new URL("../servers/delivery-server.ts", import.meta.url));

export interface DeliveryRig {
  receiver: ChildServer;
  server: ChildServer;
  /** POSTs `sizes` to the server's `/bench/<workload>` and resolves its JSON measurement. */
  measure<T>(workload: string, sizes?: Record<string, number>): Promise<T>;
  stop(): Promise<void>;
}

/**
 * Three processes: this one drives, bench/servers/receiver.ts plays the integration, and
 * bench/servers/delivery-server.ts runs runplane with its dispatcher. `env` goes to the latter
 * (e.g. NODE_OPTIONS=--cpu-prof for a profile).
 */
export async function startDeliveryRig(env: Record<string, string> = {}): Promise<DeliveryRig> {
  const receiver = await startServer("receiver", {}, RECEIVER);
  let server: ChildServer;
  try {
    server = await startServer("delivery", { RECEIVER_URL: receiver.url, ...env }, DELIVERY_SERVER);
  } catch (error) {
    await receiver.stop();
    throw error;
  }
  return {
    receiver,
    server,
    async measure<T>(workload: string, sizes: Record<string, number> = {}): Promise<T> {
      const res = await fetch(`${server.url}/bench/${workload}`, { method: "POST", body: JSON.stringify(sizes) });
      if (res.status !== 200) throw new Error(`${workload} failed: ${await res.text()}`);
      return (await res.json()) as T;
    },
    stop: async () => {
      await Promise.all([server.stop(), receiver.stop()]);
    },
  };
}
