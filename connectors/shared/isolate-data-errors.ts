import type { TrackedRecord } from '../../src/core/records/types';
import { PermanentError } from '../errors';
import type { RecordOutcome } from '../types';
import { missingKeyError } from './batch-records';

const OK: RecordOutcome = { status: 'ok' };

/** A user or session without its key can never be written. The database refuses the subtler cases itself. */
function unwritable(record: TrackedRecord): RecordOutcome | undefined {
  if (record.kind === 'user' && !record.uid) return { status: 'failed', error: missingKeyError('user') };
  if (record.kind === 'session' && !record.sid) return { status: 'failed', error: missingKeyError('session') };
  return undefined;
}

/** How a SQL destination writes a batch in one transaction, and tells a refusal of the data from any other failure. */
export interface TransactionalWrite {
  /** Writes the records in one transaction: all of them, or (on any error) none. */
  apply(records: readonly TrackedRecord[]): Promise<void>;
  /** The database refused a value (a type, a constraint), not the batch as a whole. */
  isDataError(err: unknown): boolean;
  /** The outcome of a record the database refuses, with its own words. */
  refused(err: unknown): string;
}

/**
 * Writes one batch and returns an outcome per record, in order. The batch is one transaction;
 * when the database refuses it for a data error, the records are written again one by one (each
 * its own transaction, still in order) to find the culprits, which fail permanently while the rest
 * succeed. Any other error is thrown: it concerns the whole batch.
 */
export async function writeIsolatingDataErrors(write: TransactionalWrite, records: readonly TrackedRecord[]): Promise<RecordOutcome[]> {
  const outcomes: RecordOutcome[] = records.map((r) => unwritable(r) ?? OK);
  const writable = records.filter((_, i) => outcomes[i] === OK);
  try {
    await write.apply(writable);
    return outcomes;
  } catch (err) {
    if (!write.isDataError(err)) throw err;
  }
  for (let i = 0; i < records.length; i++) {
    if (outcomes[i] !== OK) continue;
    try {
      await write.apply([records[i]!]);
    } catch (err) {
      if (!write.isDataError(err)) throw err;
      outcomes[i] = { status: 'failed', error: new PermanentError(write.refused(err), { cause: err }) };
    }
  }
  return outcomes;
}
