/** One measured series: the median of its samples and their range. */
export interface Series {
  samples: number[];
  median: number;
  min: number;
  max: number;
}

export function series(samples: number[]): Series {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { samples, median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

/** Nearest-rank percentile of ascending `sorted`. */
export const percentile = (sorted: number[], p: number): number => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;

/** Alternates subject and baseline samples so drift on a shared 2-core machine hits both alike. */
export async function alternate(
  count: number,
  subject: () => Promise<number>,
  baseline: () => Promise<number>,
): Promise<{ subject: Series; baseline: Series }> {
  const s: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < count; i++) {
    b.push(await baseline());
    s.push(await subject());
  }
  return { subject: series(s), baseline: series(b) };
}
