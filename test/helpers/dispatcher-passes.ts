/**
 * Quiescent points of a background dispatcher, so a test waits on what it did rather than on a
 * wall-clock window.
 */

/** The part of `runplane.runTasks.deliveries` this needs. */
interface Prunable {
  attempts: { prune(): Promise<number> };
}

/**
 * Resolves once the first background pass of a dispatcher started after this call is over: that
 * pass ends with a sweep that prunes delivery attempts (later passes prune once a minute only).
 * Call it before `start()`.
 */
export function firstPassOver(deliveries: Prunable): Promise<void> {
  const { attempts } = deliveries;
  const prune = attempts.prune;
  return new Promise<void>((resolve) => {
    attempts.prune = () => {
      attempts.prune = prune;
      return prune.call(attempts).finally(resolve);
    };
  });
}
