import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runTaskRequestTemplate } from "../../src/domain/request-template.js";
import { buildRunTaskRequest, type RunTaskRequestInput } from "../../src/domain/run-task-request.js";
import { ENFORCEMENT_LEVELS, RUN_STAGES } from "../../src/schemas/run-tasks.js";

// Strings that try to fake the keys the template cuts at, quotes, backslashes, controls, unicode.
const KEYS = [',"access_token":""', ',"task_result_id":""', '","task_result_enforcement_level":"', "\\", '"', "\u0000", "\u2028", "é", "🙂", "%2F", "/"];
const text = fc.oneof(fc.string({ unit: "grapheme", maxLength: 30 }), fc.array(fc.constantFrom(...KEYS), { maxLength: 6 }).map((a) => a.join("")));
const nullable = fc.option(text, { nil: null });

const inputArb: fc.Arbitrary<RunTaskRequestInput> = fc.record({
  stage: fc.constantFrom(...RUN_STAGES),
  accessToken: text,
  urls: fc.record({ publicUrl: fc.oneof(fc.constant("https://rp.example"), text), appUrl: text, basePath: fc.oneof(fc.constant("/api/v2"), text) }),
  organizationName: text,
  run: fc.record({ id: text, createdAt: text, createdBy: text, message: text, isSpeculative: fc.boolean(), planId: text }),
  configurationVersion: fc.record({ id: text, downloadable: fc.boolean() }),
  workspace: fc.record({ id: text, name: text, workingDirectory: text }),
  vcs: fc.option(fc.record({ branch: nullable, repoUrl: nullable, commitUrl: nullable, commitHash: nullable, pullRequestUrl: nullable }), { nil: null }),
  taskResult: fc.record({ id: text, enforcementLevel: fc.constantFrom(...ENFORCEMENT_LEVELS) }),
});

const SEED = Number(process.env.PROPERTY_SEED ?? 20261125);

describe("run task request template (D14)", () => {
  it("gives each result exactly the bytes of serializing its whole request", () => {
    console.log(`request template property: seed ${SEED} (PROPERTY_SEED to change)`);
    fc.assert(
      fc.property(inputArb, fc.array(fc.tuple(text, text, fc.constantFrom(...ENFORCEMENT_LEVELS)), { minLength: 1, maxLength: 4 }), (input, results) => {
        const { accessToken: _t, taskResult: _r, ...stage } = input;
        const template = runTaskRequestTemplate(stage);
        for (const [accessToken, id, enforcementLevel] of results) {
          const taskResult = { id, enforcementLevel };
          expect(template({ accessToken, taskResult })).toBe(JSON.stringify(buildRunTaskRequest({ ...input, accessToken, taskResult })));
        }
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("serves the documented example unchanged", () => {
    const input: RunTaskRequestInput = {
      stage: "post_plan",
      accessToken: "tok",
      urls: { publicUrl: "https://rp.example/", appUrl: "https://app.example", basePath: "api/v2" },
      organizationName: "acme",
      run: { id: "run-1", createdAt: "2024-01-01T00:00:00.000Z", createdBy: "me", message: 'say "hi"', isSpeculative: false, planId: "plan-1" },
      configurationVersion: { id: "cv-1", downloadable: true },
      workspace: { id: "ws-1", name: "net", workingDirectory: "" },
      vcs: null,
      taskResult: { id: "taskrs-1", enforcementLevel: "mandatory" },
    };
    const { accessToken, taskResult, ...stage } = input;
    const out = JSON.parse(runTaskRequestTemplate(stage)({ accessToken, taskResult })) as Record<string, unknown>;
    expect(out).toMatchObject({ access_token: "tok", task_result_id: "taskrs-1", task_result_enforcement_level: "mandatory", run_message: 'say "hi"' });
    expect(out.task_result_callback_url).toBe("https://rp.example/api/v2/task-results/taskrs-1/callback");
  });
});
