import type { TrackedRecord } from '../../src/core/records/types';
import type { Logger } from '../../src/core/logger';
import { RetryableError } from '../errors';
import type { RecordOutcome } from '../types';
import type { Warehouse } from './database';
import { errorMessage, isDuplicateKeyError, isOutOfMemoryError, toConnectorError } from './duckdb-errors';
import { writeBatch } from './write-batch';

export interface RecoveringWrite {
  warehouse: Warehouse;
  file: string;
  maxColumns: number;
  logger: Logger;
  signal: AbortSignal;
  /** Some of the records may be stored already (WriteOptions.resend). */
  resend: boolean;
}

/**
 * Writes a batch, recovering from the two ways DuckDB can fail a whole batch for its own state
 * rather than the records' (each failure has closed the file already, see Warehouse.use):
 *
 * - **Out of memory**, in a statement or at COMMIT: the writer doubles its memory limit up to
 *   WAREHOUSE_MEMORY_MAX_MB and writes the batch again. At the ceiling it is a RetryableError
 *   naming the setting to raise: the records stay queued, never dead-lettered. (Writing the batch
 *   in smaller parts would not help: what a write needs grows with the table's columns and its
 *   `_id` index, not with the batch, whose rows DuckDB spills to disk.)
 * - **A duplicate key**: a write never conflicts with a stored key (it skips or merges it), so this
 *   is an index that disagrees with the table. The batch goes again on the file opened afresh,
 *   where the stored keys are skipped as usual; a second refusal is a RetryableError, so the
 *   records wait for a later attempt rather than being called duplicates of rows that are not
 *   there.
 */
export async function writeRecovering(w: RecoveringWrite, records: readonly TrackedRecord[]): Promise<RecordOutcome[]> {
  let reopenedForKeys = false;
  for (;;) {
    try {
      return await w.warehouse.use(w.signal, (conn) => writeBatch(conn, records, w.maxColumns, w.resend));
    } catch (err) {
      if (isOutOfMemoryError(err)) {
        const raised = await w.warehouse.raiseMemoryLimit(w.signal);
        if (raised !== null) {
          w.logger.warn({ file: w.file, memoryMb: raised }, 'a write of the local warehouse ran out of memory: its writer now takes up to this much and writes the batch again (WAREHOUSE_MEMORY_MAX_MB is the ceiling)');
          continue;
        }
        throw toConnectorError(w.file, err);
      }
      if (isDuplicateKeyError(err)) {
        if (reopenedForKeys) throw duplicateKeyError(w.file, err);
        reopenedForKeys = true;
        w.logger.warn({ file: w.file, err: errorMessage(err) }, 'the local warehouse refused a batch for a key it does not hold; the file was opened again and the batch goes again');
        continue;
      }
      throw toConnectorError(w.file, err);
    }
  }
}

function duplicateKeyError(file: string, err: unknown): RetryableError {
  return new RetryableError(
    `the local warehouse ${file} refused a batch twice for a key it does not store (${errorMessage(err)}); the records stay queued and are written again later`,
    { reason: 'duplicate-key', cause: err },
  );
}
