import { describe, expect, it } from "vitest";
import { matchRunRead, SIMULATED_PLAN_LOG } from "../../src/testing/simulate/run-reads.js";

/**
 * decision D48: the simulated platform (`runplane check-integration`) serves its plan log as the
 * dialect's platform does: framed with STX and ETX in the hcp-terraform dialect (the plan is
 * finished), so an integration that reads logs meets HCP Terraform's bytes before it meets HCP.
 */
describe("the simulated platform's plan log", () => {
  const read = (dialect: "default" | "hcp-terraform") => matchRunRead("GET", "/api/v2/plans/plan-abc/log")!.answer("http://127.0.0.1:1", dialect, [], "");

  it("carries HCP's framing in the hcp-terraform dialect", () => {
    expect(read("hcp-terraform")).toMatchObject({ status: 200, body: `\x02${SIMULATED_PLAN_LOG}\x03` });
  });

  it("is the bare log in the default dialect, as runplane serves it there", () => {
    expect(read("default")).toMatchObject({ status: 200, body: SIMULATED_PLAN_LOG });
  });
});
