/** How the benchmarks print their figures. */

/** A number with thousands separators and `digits` decimals. */
export const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The nearest-rank `p`-th percentile (0–100) of ascending `sorted`; NaN when it is empty. */
export const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
