/**
 * At most one stage recompute per stage at a time in this process. Callbacks for the results of
 * one stage tend to land together; each recompute reads every result of the stage, and all but one
 * of the concurrent ones would then lose the stage's compare-and-set and read it again. A caller
 * that finds a pass in flight asks for one more pass after it (which sees its write) and waits
 * for that, so no callback is answered before a recompute that saw its result.
 */
export function createStageSettler(recompute: (stageId: string) => Promise<unknown>): (stageId: string) => Promise<void> {
  const passes = new Map<string, { again: boolean; done: Promise<void> }>();
  return (stageId) => {
    const inFlight = passes.get(stageId);
    if (inFlight) {
      inFlight.again = true;
      return inFlight.done;
    }
    const pass = { again: true, done: Promise.resolve() };
    passes.set(stageId, pass);
    pass.done = (async () => {
      try {
        while (pass.again) {
          pass.again = false;
          await recompute(stageId);
        }
      } finally {
        passes.delete(stageId);
      }
    })();
    return pass.done;
  };
}
