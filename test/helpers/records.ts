import type { TrackedRecord } from '../../src/core/records/types';
import type { TestApi } from './api';

/** The queued record with this id; a 202 means it is in Redis already, so there is nothing to wait for. */
export async function storedRecord(api: TestApi, id: string): Promise<TrackedRecord & { trackerId: string }> {
  const record = (await api.queuedRecords()).find((r) => r.id === id);
  if (!record) throw new Error(`record ${id} is not in the queue`);
  return record;
}

export async function storedCount(api: TestApi): Promise<number> {
  return (await api.queuedRecords()).length;
}

/** base64 of the JSON of `value`, in the alphabet and padding a client might use. */
export function base64Json(value: unknown, opts: { urlSafe?: boolean; pad?: boolean } = {}): string {
  let s = Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
  if (opts.urlSafe) s = s.replace(/\+/g, '-').replace(/\//g, '_');
  if (opts.pad === false) s = s.replace(/=+$/, '');
  return s;
}

/** The body of an error answer. */
export interface ErrorAnswer {
  error: { code: string; message: string; field?: string };
}
