import { afterEach, beforeEach, describe } from "vitest";
import type { Storage } from "../../storage/types.js";
import { describeAgentTokenCases } from "./agent-tokens.cases.js";
import { describeAgentCases } from "./agents.cases.js";
import { describeAuditCases } from "./audit.cases.js";
import { describeApiTokenCases } from "./api-tokens.cases.js";
import type { ConformanceContext, ConformanceSetup } from "./context.js";
import { describeDirectoryCases } from "./directory.cases.js";
import { describeGeneralCases } from "./general.cases.js";
import { describeHostCases } from "./hosts.cases.js";
import { describeSealedValueCases } from "./sealed-values.cases.js";
import { describeVariableCases } from "./variables.cases.js";
import { describeTeamProjectCases } from "./team-projects.cases.js";
import { describeRunTaskCases } from "./run-tasks.cases.js";
import { describeRevisionCases } from "./revisions.cases.js";
import { describeTaskSettleCases } from "./task-settle.cases.js";
import { describeCommentCases } from "./comments.cases.js";
import { describeDeliveryAttemptCases } from "./delivery-attempts.cases.js";
import { describeHandOutCases } from "./hand-out.cases.js";
import { describeRetryNowCases } from "./retry-now.cases.js";

export type { ConformanceContext, ConformanceHandle, ConformanceSetup } from "./context.js";

/** Why a durability case is skipped: the setup gave no `reopen`. */
export const NO_REOPEN = "durability case skipped: the setup returns no reopen()";

/**
 * The one Storage conformance suite (house style habit 4). Each adapter's test file calls it once:
 * `setup` builds a fresh, empty store for every case, `reopen` (optional) proves durability,
 * `dispose` (optional; default closes the store) cleans up. Shipped as `runplane/testing` so a
 * custom adapter is checked exactly like the bundled ones.
 * A later aggregate adds a `<aggregate>.cases.ts` exporting `describe<Aggregate>Cases(ctx)` and one
 * line below.
 */
export function runStorageConformance(name: string, setup: ConformanceSetup): void {
  describe(`storage conformance: ${name}`, () => {
    let handle: Awaited<ReturnType<ConformanceSetup>> | undefined;
    let current: Storage | undefined;

    let skipCase: ((note: string) => never) | undefined;
    const ctx: ConformanceContext = {
      get storage(): Storage {
        if (!current) throw new Error("conformance: storage used outside a case");
        return current;
      },
      async reopen() {
        if (!handle) throw new Error("conformance: reopen outside a case");
        if (!handle.reopen) return skipCase!(NO_REOPEN);
        current = await handle.reopen();
        return current;
      },
    };

    beforeEach(async (test) => {
      skipCase = (note) => test.skip(note) as never;
      handle = await setup();
      current = handle.storage;
    });
    afterEach(async () => {
      if (handle?.dispose) await handle.dispose();
      else await current?.close();
      handle = undefined;
      current = undefined;
    });

    describeGeneralCases(ctx);
    describeDirectoryCases(ctx);
    describeApiTokenCases(ctx);
    describeAgentTokenCases(ctx);
    describeVariableCases(ctx);
    describeSealedValueCases(ctx);
    describeTeamProjectCases(ctx);
    describeRunTaskCases(ctx);
    describeTaskSettleCases(ctx);
    describeRevisionCases(ctx);
    describeCommentCases(ctx);
    describeDeliveryAttemptCases(ctx);
    describeHandOutCases(ctx);
    describeRetryNowCases(ctx);
    describeHostCases(ctx);
    describeAgentCases(ctx);
    describeAuditCases(ctx);
  });
}
