import type { RedisClient } from '../../src/core/redis/cluster';
import { PermanentError } from '../../connectors/errors';
import { DeadLetterStore } from '../../jobs/delivery/dead-letters';
import { deliveryKeys } from '../../jobs/delivery/keys';
import type { TrackedRecord } from '../../src/core/records/types';
import type { TrackerStore } from '../../src/core/trackers/store';
import { TrackerSchema, type Destination } from '../../src/core/trackers/types';

/** A tracker written straight to the store, with destinations of any type, registered or not. */
export async function seedTracker(store: TrackerStore, id: string, destinations: Array<Partial<Destination> & { id: string; type: string }> = []): Promise<void> {
  const tracker = TrackerSchema.parse({ id, name: id, tokens: [{ token: `tok_${id}_${'x'.repeat(24)}` }], destinations });
  if (!(await store.create(tracker))) throw new Error(`tracker ${id} exists`);
}

export function eventRecord(n: number, extra: Partial<TrackedRecord> = {}): TrackedRecord {
  const at = new Date(Date.UTC(2024, 0, 1, 0, 0, n)).toISOString();
  return { kind: 'event', id: `0190c000-0000-7000-8000-${String(n).padStart(12, '0')}`, receivedAt: at, eventAt: at, event: 'purchase', uid: `u${n}`, properties: { n }, ...extra };
}

/** Dead letters put in the way the delivery loop does, one `PermanentError` each. */
export async function seedDeadLetters(redis: RedisClient, prefix: string, trackerId: string, destinationId: string, records: TrackedRecord[]): Promise<DeadLetterStore> {
  const store = new DeadLetterStore(redis, deliveryKeys(prefix, { trackerId, destinationId }));
  const items = records.map((record) => ({ record, error: new PermanentError(`row ${record.id} rejected: bad value`, { status: 400 }) }));
  // One XADD per record in a MULTI: ids are strictly increasing, in record order.
  for (let i = 0; i < items.length; i += 1000) await store.add(items.slice(i, i + 1000));
  return store;
}
