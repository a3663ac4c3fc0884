import path from 'node:path';
import * as z from 'zod';

const relativePath = z
  .string()
  .min(1)
  .refine((p) => !path.isAbsolute(p), 'path must be relative to the data directory')
  .refine((p) => !path.normalize(p).split(/[\\/]/).includes('..'), 'path must stay inside the data directory');

/** Settings of a `local` destination. Every field is optional. */
export const LocalSettingsSchema = z
  .strictObject({
    /**
     * The DuckDB file, relative to the data directory (`DATA_DIR`).
     * Default `warehouse/<trackerId>.duckdb`.
     */
    path: relativePath
      .optional()
      .describe('DuckDB file, relative to the data directory (DATA_DIR) and inside it. Default: warehouse/<tracker>.duckdb. Example: warehouse/shop.duckdb.'),
    /**
     * The writer keeps the file open (and locked) while batches keep coming, and closes it after
     * this long without a write, so that other processes (`tributary query`, the DuckDB CLI) can open
     * it. Default 1000 ms.
     */
    releaseAfterIdleMs: z
      .number()
      .int()
      .min(0)
      .max(600_000)
      .optional()
      .describe(
        'Milliseconds without a write after which the writer closes and unlocks the file, so that tributary query or the DuckDB CLI can open it. Default: 1000 (1 s).',
      ),
    /**
     * Most property columns per table. Properties beyond it are kept in `_properties` only, so a
     * client sending ever-new property names cannot grow a table without bound. Default 1000.
     */
    maxColumns: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .optional()
      .describe('Most property columns per table; further properties are kept only in the _properties JSON column. Default: 1000.'),
    /**
     * Most records in one write (one transaction). A backlog drains fastest in large batches, since
     * DuckDB spends about as long on a batch of 10 as of 1 000; a smaller one bounds the memory a
     * write takes. Default 5000.
     */
    batchRecords: z
      .number()
      .int()
      .min(1)
      .max(50_000)
      .optional()
      .describe('Most records written in one transaction. Default: 5000. A batch that is not full is written once its oldest record has waited 250 ms.'),
  })
  .meta({ title: 'Local warehouse', description: 'An embedded DuckDB database per tracker, under the data directory. Every setting is optional.' });

export type LocalSettings = z.infer<typeof LocalSettingsSchema>;

export const DEFAULT_RELEASE_AFTER_IDLE_MS = 1000;
export const DEFAULT_MAX_COLUMNS = 1000;
export const DEFAULT_BATCH_RECORDS = 5000;

/** Absolute path of a tracker's warehouse file. */
export function warehouseFile(dataDir: string, trackerId: string, settings: LocalSettings): string {
  return path.resolve(dataDir, settings.path ?? path.join('warehouse', `${trackerId}.duckdb`));
}
