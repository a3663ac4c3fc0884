/**
 * Pairs of runs side by side: on a VM whose speed drifts by a fifth over tens of seconds, runs one
 * after the other measure the drift; short runs right after each other see the same machine, and
 * the median of their ratios is read.
 */

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A run's figures that a pair compares. */
export interface PairedSample {
  requestsPerSecond: number;
  /** Server CPU seconds a request. */
  cpuPerRequest: number;
}

/** The median ratios of B to A over the pairs. */
export interface PairedRatio {
  /** B's requests a second over A's. */
  requests: number;
  /** B's server CPU a request over A's. */
  cpu: number;
  rounds: number;
}

/**
 * `count` (at least one) pairs of runs A and B right after each other, B first in every other
 * pair, so that a drift within a pair favours neither; `each` is told every pair as it ends.
 */
export async function alternatePairs<T>(
  count: number,
  runA: (round: number) => Promise<T>,
  runB: (round: number) => Promise<T>,
  sample: (run: T) => PairedSample,
  each: (round: number, a: T, b: T) => void,
): Promise<PairedRatio> {
  const requestRatios: number[] = [];
  const cpuRatios: number[] = [];
  for (let round = 1; round <= Math.max(1, count); round++) {
    let a: T, b: T;
    if (round % 2) {
      a = await runA(round);
      b = await runB(round);
    } else {
      b = await runB(round);
      a = await runA(round);
    }
    const [sa, sb] = [sample(a), sample(b)];
    requestRatios.push(sb.requestsPerSecond / sa.requestsPerSecond);
    cpuRatios.push(sb.cpuPerRequest / sa.cpuPerRequest);
    each(round, a, b);
  }
  return { requests: median(requestRatios), cpu: median(cpuRatios), rounds: requestRatios.length };
}
