import type { Connector, DestinationContext, DestinationWriter } from '../types';
import { guardWrite } from '../shared/write-guard';
import { DEFAULT_BATCH_RECORDS, DEFAULT_MAX_COLUMNS, DEFAULT_RELEASE_AFTER_IDLE_MS, LocalSettingsSchema, warehouseFile, type LocalSettings } from './config';
import { prepareDirectory, Warehouse } from './database';
import { defaultEngineLimits } from './engine';
import { toConnectorError } from './duckdb-errors';
import { writeRecovering } from './write-recovering';

export { exportWarehouse, queryWarehouse, WarehouseMissingError, type ExportedFile, type ExportFormat, type QueryOptions, type QueryResult, type ReadOptions } from './query';
export { LocalSettingsSchema, warehouseFile, type LocalSettings } from './config';

/** A trickle is written within about a quarter of a second (a batch's fixed cost is ~12–15 ms). */
const BATCH_MAX_AGE_MS = 250;

/**
 * The `local` connector: an embedded DuckDB warehouse, one file per tracker under the data
 * directory (`warehouse/<trackerId>.duckdb` unless `path` says otherwise), with tables `users`
 * (one row per `_uid`), `sessions` (one row per `_sid`) and `events` (one row per `_id`).
 *
 * ## Columns
 * Every table starts with its reserved columns (`_id`, `_uid`, `_sid`, `_event`, `_event_at`,
 * `_received_at`, as the resource has them), then `_context` (the request's ip, user agent and
 * referer as JSON, when the tracker captures them) and `_properties` (all of the record's
 * properties as JSON; for users and sessions, the merged state). Then one column per property.
 *
 * ## Types
 * A property's column is created the first time the property arrives with a non-null value, typed
 * from that value: whole numbers within 64 bits → `BIGINT`, wider ones (up to 128 bits) → `HUGEINT`,
 * other numbers → `DOUBLE`, `true`/`false` → `BOOLEAN`,
 * strings → `VARCHAR`, objects and arrays → `JSON` (the value as JSON text; query it with DuckDB's
 * `->`, `->>` and `json_extract`). When a batch's values disagree, the first one decides.
 *
 * When a later value has another type:
 * - a fraction in a `BIGINT` column widens the column to `DOUBLE` (existing values are kept exactly),
 *   unless the column holds a whole number beyond 2^53, which a double would round: then the column
 *   stays `BIGINT` and the fraction is in `_properties` only; a whole number beyond 64 bits in a
 *   `BIGINT` column widens it to `HUGEINT`;
 * - a whole number in a `DOUBLE` column is stored as a double when it is within 2^53; beyond, the
 *   cell is NULL and the exact number is in `_properties`;
 * - any other mismatch (a string in a number column, a number in a text column, an object in a
 *   `BOOLEAN` column…) leaves that row's typed column NULL. The value is not lost: it is in the
 *   row's `_properties`, e.g. `_properties->>'plan'`. Columns never change type otherwise, so the
 *   values already stored keep their meaning.
 *
 * `null` never creates a column. On an event it is a NULL cell (and `null` in `_properties`); on a
 * user or session it clears the property: the column becomes NULL and the key leaves `_properties`.
 *
 * ## Names
 * Property names are column names verbatim (quoted), whatever they contain: spaces, dots, quotes,
 * `__proto__`, `constructor`, SQL keywords. Three exceptions keep the value in `_properties` only:
 * - DuckDB compares column names case-insensitively (for ASCII letters), so `Plan` and `plan`
 *   cannot both be columns: the spelling that arrives first owns the column, and a property whose
 *   name differs from an existing column only in case stays in `_properties`;
 * - names that match a reserved column or `_context` / `_properties` in any case, the empty name,
 *   and names containing a NUL character;
 * - properties beyond `maxColumns` property columns per table (default 1000).
 *
 * ## Upserts
 * Users and sessions merge: only the properties an update supplies change, `null` clears, the rest
 * are kept. Updates to a key are applied in batch order; the merge is by top-level property (an
 * object value replaces the stored object whole). A session's `_uid` and any row's `_context` keep
 * their stored value when an update does not supply one. `_id` and `_received_at` are those of the
 * latest update.
 *
 * ## One writer
 * DuckDB locks the file for one writer process. The worker keeps it open while batches flow and
 * closes it after `releaseAfterIdleMs` (default 1 s) without writes, or as soon as a reader
 * (`tributary query`, `tributary export`) asks for it. Writers of several relay processes (workers
 * delivering partitions of one tracker) take turns on the file (database.ts, file-handoff.ts). A
 * writer that finds the file held by any other process gets a RetryableError naming it, and its
 * batch is retried later.
 */
export const localConnector: Connector<LocalSettings> = {
  type: 'local',
  description: 'An embedded DuckDB warehouse on local disk: users, sessions and events tables per tracker.',
  settingsSchema: LocalSettingsSchema,
  // A batch costs DuckDB ~12–15 ms whatever its size, plus ~23 µs a record (one transaction, a stage
  // table, one INSERT … ON CONFLICT): delivering a backlog ran at 21 700 records/s in batches of
  // 1 000, 31 200 of 2 500, 36 000 of 5 000, 40 400 of 10 000 (bench:scale, bench/RESULTS.md).
  batch: { maxRecords: DEFAULT_BATCH_RECORDS, maxAgeMs: BATCH_MAX_AGE_MS },
  batchFor: (settings) => ({ maxRecords: settings.batchRecords ?? DEFAULT_BATCH_RECORDS, maxAgeMs: BATCH_MAX_AGE_MS }),
  async open(ctx) {
    return createLocalWriter(ctx);
  },
};

function createLocalWriter(ctx: DestinationContext<LocalSettings>): DestinationWriter {
  const file = warehouseFile(ctx.dataDir, ctx.trackerId, ctx.settings);
  const maxColumns = ctx.settings.maxColumns ?? DEFAULT_MAX_COLUMNS;
  const warehouse = Warehouse.acquire(file, ctx.settings.releaseAfterIdleMs ?? DEFAULT_RELEASE_AFTER_IDLE_MS, ctx.engine ?? defaultEngineLimits(ctx.dataDir));
  let closed = false;

  const guard = (signal: AbortSignal) => guardWrite(`the local warehouse writer for ${file}`, closed, signal);

  return {
    async write(records, signal, options) {
      guard(signal);
      if (records.length === 0) return [];
      return writeRecovering({ warehouse, file, maxColumns, logger: ctx.logger, signal, resend: options?.resend ?? true }, records);
    },
    async test(signal) {
      guard(signal);
      await prepareDirectory(file);
      try {
        // Opening creates the file and the tables.
        await warehouse.use(signal, async () => undefined);
      } catch (err) {
        throw toConnectorError(file, err);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await warehouse.release();
    },
  };
}
