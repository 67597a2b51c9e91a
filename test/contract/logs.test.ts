import { afterEach, describe, expect, it } from "vitest";
import { oneDocument, problems } from "./go-tfe-shapes.js";
import type { RunDetails } from "../../src/index.js";
import { logChunkUrl, phaseDone, readLogLikeGoTfe, startContractServer, type ContractServer } from "./harness.js";

/**
 * Decision D32: go-tfe's `Plans.Logs` and `Applies.Logs` as they call the API. They read
 * the plan or apply, then GET its `log-read-url` with no Authorization header, replacing the URL's
 * whole query with `limit` and `offset` on every chunk (logreader.go), until a chunk comes back
 * empty. Depends on the capability log URLs of item 1 (decision D32). decision D48: in the
 * hcp-terraform dialect the log carries HCP's framing, STX first and ETX once the phase is final.
 */

const PLAN_LOG = "Terraform v1.9.5\nPlan: 1 to add, 0 to change, 0 to destroy.\n";
const APPLY_LOG = "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.\n";

describe("go-tfe reads plan and apply logs through log-read-url, with no credential", () => {
  let server: ContractServer | undefined;
  afterEach(async () => server?.close());

  async function started(details: RunDetails | null = null) {
    const s = (server = await startContractServer({ artifacts: { planLog: () => PLAN_LOG, applyLog: () => APPLY_LOG }, runs: { details: () => details } }));
    const { run } = await s.app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    return { s, run };
  }

  /** logreader.go: chunks of `limit` bytes from `offset`, no Authorization, until one is empty. */
  async function readLikeGoTfe(s: ContractServer, logReadUrl: string, limit: number): Promise<string> {
    let out = "";
    for (let chunk = 0; chunk < 100; chunk++) {
      const res = await s.fetchBare(logChunkUrl(logReadUrl, Buffer.byteLength(out), limit));
      expect(res.status, `chunk ${chunk} of ${logReadUrl}`).toBe(200);
      if (res.text === "") return out;
      out += res.text;
    }
    throw new Error("the log never ended");
  }

  it("Plans.Logs: the plan's log-read-url answers 200 with the log, in chunks, without Authorization", async () => {
    const { s, run } = await started();
    const plan = await s.call("GET", `/plans/${run.planId}`);
    expect(problems(oneDocument("Plan"), plan.json)).toStrictEqual([]);
    const url = plan.json.data.attributes["log-read-url"] as string;
    expect(url.startsWith(s.origin)).toBe(true);
    expect((await s.fetchBare(url)).text).toBe(`\x02${PLAN_LOG}\x03`);
    expect(await readLikeGoTfe(s, url, 16)).toBe(`\x02${PLAN_LOG}\x03`);
  });

  it("Applies.Logs: the apply's log-read-url answers 200 with the log, in chunks, without Authorization", async () => {
    const { s, run } = await started();
    const apply = await s.call("GET", `/runs/${run.id}/apply`);
    expect(problems(oneDocument("Apply"), apply.json)).toStrictEqual([]);
    const url = apply.json.data.attributes["log-read-url"] as string;
    expect(await readLikeGoTfe(s, url, 7)).toBe(`\x02${APPLY_LOG}\x03`);
  });

  it("Plans.Logs returns the log, STX and ETX stripped, once the plan is finished (D48)", async () => {
    const { s, run } = await started({ plan: { status: "finished" }, apply: { status: "unreachable" } });
    const url = (await s.call("GET", `/plans/${run.planId}`)).json.data.attributes["log-read-url"] as string;
    for (const limit of [1, 5, 16, 1000]) {
      expect(await readLogLikeGoTfe(s, url, limit, phaseDone(s, `/plans/${run.planId}`))).toStrictEqual({ text: PLAN_LOG, framed: true });
    }
  });

  it("Applies.Logs returns for the apply of a run never applied: its status is unreachable and its log ends (D47, D48)", async () => {
    const { s, run } = await started({ status: "errored", plan: { status: "finished" }, apply: { status: "unreachable" } });
    const apply = await s.call("GET", `/runs/${run.id}/apply`);
    expect(problems(oneDocument("Apply"), apply.json)).toStrictEqual([]);
    expect(apply.json.data.attributes.status).toBe("unreachable");
    const url = apply.json.data.attributes["log-read-url"] as string;
    expect(await readLogLikeGoTfe(s, url, 64, phaseDone(s, `/applies/${run.applyId}`))).toStrictEqual({ text: APPLY_LOG, framed: true });
  });

  it("leaves ETX off while the phase runs, so the reader keeps polling for more (D48)", async () => {
    const { s, run } = await started({ plan: { status: "running" } });
    const url = (await s.call("GET", `/plans/${run.planId}`)).json.data.attributes["log-read-url"] as string;
    expect((await s.fetchBare(url)).text).toBe(`\x02${PLAN_LOG}`);
    await expect(readLogLikeGoTfe(s, url, 64, phaseDone(s, `/plans/${run.planId}`), 12)).rejects.toThrow(/did not stop/);
  });

  it("serves the host's log unframed in the default dialect (D48)", async () => {
    const s = (server = await startContractServer({ dialect: "default", artifacts: { planLog: () => PLAN_LOG } }));
    const { run } = await s.app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    const url = (await s.call("GET", `/plans/${run.planId}`)).json.data.attributes["log-read-url"] as string;
    expect((await s.fetchBare(url)).text).toBe(PLAN_LOG);
  });

  it("answers a forged log URL 404, like a missing object: a changed character, and every other spelling of the same MAC", async () => {
    const { s, run } = await started();
    const url = new URL((await s.call("GET", `/plans/${run.planId}`)).json.data.attributes["log-read-url"] as string);
    const parts = url.pathname.split("/");
    const capability = parts.pop()!;
    const forged = (last: string): string => {
      const copy = new URL(url);
      copy.pathname = [...parts, last].join("/");
      return copy.toString();
    };
    // The MAC's last base64url character carries 2 bits the decoder drops: each of its other 3
    // spellings decodes to the same bytes and must be refused as surely as a changed byte.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const mac = capability.slice(capability.lastIndexOf(".") + 1);
    const same = [...alphabet]
      .map((c) => `${capability.slice(0, -1)}${c}`)
      .filter((other) => other !== capability && Buffer.from(other.slice(-mac.length), "base64url").equals(Buffer.from(mac, "base64url")));
    expect(same).toHaveLength(3);
    // A character in the middle of the MAC, where every bit counts.
    const at = capability.length - 10;
    const changed = `${capability.slice(0, at)}${capability[at] === "A" ? "B" : "A"}${capability.slice(at + 1)}`;
    for (const spelling of [...same, changed]) expect((await s.fetchBare(forged(spelling))).status, spelling).toBe(404);
    expect((await s.fetchBare(forged(capability))).status).toBe(200);
  });
});
