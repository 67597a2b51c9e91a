import { afterEach, describe, expect, it } from "vitest";
import { loopbacksClosedAfterEach, type ReceivedRequest } from "../helpers/loopback-server.js";
import { leakedSignature, signatureEchoes } from "../helpers/signature-encodings.js";
import { deliveriesTo, deliveryApp, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// Decisions D31 and D38 through real attempts: an integration that answers 400 with the
// X-TFC-Task-Signature it received, in one encoding per request, never sees it stored in an
// attempt's excerpt or the delivery's last error.

let a: DeliveryApp;
const loopback = loopbacksClosedAfterEach();
afterEach(() => a.close());

const KEY = "correct-horse-battery-staple-42";

describe("the request signature echoed back in every encoding (D38)", () => {
  it("is redacted from every attempt's excerpt and last error", async () => {
    a = await deliveryApp({ dialect: "hcp-terraform" });
    const names: string[] = [];
    let delivered = 0;
    // The n-th run task request gets the n-th encoding of its own signature back.
    const echo = (req: ReceivedRequest) => {
      const encodings = signatureEchoes(req.headers["x-tfc-task-signature"]!);
      const { name, echo: body } = encodings[delivered++ % encodings.length]!;
      names.push(name);
      return { kind: "respond" as const, status: 400, headers: { "content-type": "text/plain" }, body: `bad signature, got: ${body}` };
    };
    const server = await loopback(tasksAnswer(echo));
    const total = signatureEchoes("00".repeat(64)).length;

    const first = await startRun(a, [server.url("/hook")], { hmacKey: KEY });
    const resultIds = [first.resultIds[0]!];
    await a.dispatcher().tick();
    for (let i = 1; i < total; i++) {
      const { run, stages } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: `echo ${i}` });
      await a.runplane.runTasks.startStage(run.id, "post_plan");
      resultIds.push((await a.runplane.runTasks.listResults(stages.find((s) => s.stage === "post_plan")!.id))[0]!.id);
      await a.dispatcher().tick();
    }

    const sent = deliveriesTo(server.requests);
    expect(sent).toHaveLength(total);
    for (const [i, resultId] of resultIds.entries()) {
      const signature = sent[i]!.headers["x-tfc-task-signature"]!;
      expect(signature).toMatch(/^[0-9a-f]{128}$/);
      const [attempt] = (await a.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 1 })).items;
      expect(attempt!.excerpt, names[i]).toMatch(/^bad signature, got: .*\[redacted\]/);
      expect(leakedSignature(attempt!.excerpt!, signature), names[i]).toStrictEqual([]);
      const [row] = await a.storage.taskDeliveries.listByResult(resultId);
      expect(leakedSignature(row!.lastError ?? "", signature), names[i]).toStrictEqual([]);
    }
  });
});
