import { bigIntsAsStrings, holdsBigInt, stringifyExactJson } from '../../src/core/records/exact-json';
import type { TrackedRecord } from '../../src/core/records/types';
import type { IngestJobDataV1 } from '../../jobs/routing/ingest-job';

/**
 * A job's data exactly as relays before ingest job format 2 wrote it (jobs/routing/ingest-job.ts
 * `IngestJobDataV1`): to queue old jobs and see an upgraded relay deliver them.
 */
export function ingestJobDataV1(trackerId: string, records: TrackedRecord[], bigInts: boolean, dedup?: string, partition = 0): IngestJobDataV1 {
  const data: IngestJobDataV1 = partition === 0 ? { trackerId, records } : { trackerId, partition, records };
  if (bigInts) {
    let exact: Record<string, string> | undefined;
    const plain = records.map((record, i) => {
      if (!holdsBigInt(record.properties)) return record;
      (exact ??= {})[String(i)] = stringifyExactJson(record);
      return { ...record, properties: bigIntsAsStrings(record.properties) as TrackedRecord['properties'] };
    });
    if (exact) {
      data.records = plain;
      data.exact = exact;
    }
  }
  if (dedup !== undefined) data.dedup = dedup;
  return data;
}
