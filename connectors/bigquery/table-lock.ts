import { createKeyedMutex } from '../shared/keyed-mutex';

/**
 * One writer at a time per table within this process: BigQuery runs concurrent mutating DML on a
 * table optimistically and aborts the loser ("Could not serialize access to table … due to
 * concurrent update"), and two schema patches racing could each drop the other's new columns.
 * Keyed by `project:dataset.table`, so two destinations writing one table take turns.
 */
export const withTableLock = createKeyedMutex();
