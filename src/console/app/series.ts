/** Small helpers over the per-minute arrays of the pictures over time. */

/** The element-wise sum of several series of counts. */
export function sumSeries(series: ReadonlyArray<{ counts: readonly number[] }>, length: number): number[] {
  const out = new Array<number>(length).fill(0);
  for (const s of series) s.counts.forEach((n, i) => (out[i]! += n));
  return out;
}

export interface HourRow<K extends string> {
  /** The hour's start, ms since the epoch (local hours: a time zone half an hour off UTC is grouped as its clock reads). */
  hour: number;
  label: string;
  values: Record<K, number>;
  /** Columns with no value in that hour (a gap in the samples). */
  missing: Set<K>;
}

/**
 * The minutes grouped by local hour, newest first: a column is summed (counts) or its largest value
 * kept (samples such as a backlog). Hours without any value are left out.
 */
export function hourlyRows<K extends string>(start: number, stepSeconds: number, columns: Record<K, ReadonlyArray<number | null>>, how: Partial<Record<K, 'sum' | 'max'>> = {}): Array<HourRow<K>> {
  const keys = Object.keys(columns) as K[];
  const rows = new Map<number, HourRow<K>>();
  const length = columns[keys[0]!]?.length ?? 0;
  for (let i = 0; i < length; i++) {
    const at = new Date(start + i * stepSeconds * 1000);
    at.setMinutes(0, 0, 0);
    const hour = at.getTime();
    for (const k of keys) {
      const v = columns[k][i];
      if (v === null || v === undefined) continue;
      if ((how[k] ?? 'sum') === 'sum' && v === 0) continue;
      let row = rows.get(hour);
      if (!row) {
        row = { hour, label: hourLabel(hour), values: Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>, missing: new Set(keys) };
        rows.set(hour, row);
      }
      row.values[k] = (how[k] ?? 'sum') === 'sum' ? row.values[k] + v : Math.max(row.values[k], v);
      row.missing.delete(k);
    }
  }
  return [...rows.values()].sort((a, b) => b.hour - a.hour);
}

function hourLabel(ms: number): string {
  const d = new Date(ms);
  const today = new Date();
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false });
  return d.toDateString() === today.toDateString() ? time : `${d.toLocaleDateString([], { month: 'short', day: 'numeric' })} ${time}`;
}

/** The time of the first or last minute with a count, or a dash. */
export function minuteWith(counts: readonly number[], start: number, stepSeconds: number, which: 'first' | 'last'): string {
  const index = which === 'first' ? counts.findIndex((n) => n > 0) : counts.findLastIndex((n) => n > 0);
  if (index < 0) return '—';
  return new Date(start + index * stepSeconds * 1000).toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hour12: false });
}
