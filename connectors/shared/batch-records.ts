import type { TrackedRecord } from '../../src/core/records/types';
import { PermanentError } from '../errors';
import type { UpsertKind } from './coalesce-upserts';
import { KEY_COLUMN } from './reserved-columns';

/**
 * Records with their first occurrence's place kept and later repeats of an `_id` dropped: a
 * record repeated within one batch is written once (and answered `ok` for every copy).
 */
export function uniqueById(records: readonly TrackedRecord[]): TrackedRecord[] {
  const seen = new Set<string>();
  return records.filter((r) => !seen.has(r.id) && seen.add(r.id));
}

/** The outcome error of a user without `_uid` or a session without `_sid`: there is no row to put it in, ever. */
export function missingKeyError(kind: UpsertKind): PermanentError {
  return new PermanentError(`a ${kind} without ${KEY_COLUMN[kind]} cannot be stored`, { reason: 'missing-key' });
}
