/**
 * Splits items, in order, into runs whose summed `size` stays within `maxBytes` (a run holds at
 * least one item, however large): the requests a payload limit allows (BigQuery's 10 MB per
 * call, Google's recommended 2 MB per Sheets request).
 */
export function chunkBySize<T>(items: readonly T[], maxBytes: number, size: (item: T) => number): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const n = size(item);
    if (current.length > 0 && bytes + n > maxBytes) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += n;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
