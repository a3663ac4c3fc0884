/**
 * A stateful, local BigQuery v2 for tests, benchmarks and demos, driven by the real
 * `@google-cloud/bigquery` client (`new BigQuery({ projectId, apiEndpoint: fake.url })`).
 *
 * It keeps, per project and dataset (with its location), tables with their schema, time
 * partitioning and clustering, and their rows in an embedded DuckDB. It enforces:
 * - column-name rules (letters, digits, underscore; ≤ 300 characters; reserved prefixes; no two
 *   names equal but for case) and ≤ 10 000 columns;
 * - tables.patch rules: only NULLABLE columns may be added, none removed, no type change,
 *   REQUIRED may relax to NULLABLE; 5 metadata updates per table per 10 s (403 rateLimitExceeded);
 * - DDL `ALTER TABLE … ALTER COLUMN … SET DATA TYPE`, the one way to change a type: INT64 to FLOAT64
 *   or BIGNUMERIC, others refused in BigQuery's words (ddl.ts); streaming converts values to the
 *   old type for `schemaPropagationMs`, as it refuses a new column for that long;
 * - tabledata.insertAll: per-row validation (`no such field`, bad values, missing REQUIRED) with
 *   `insertErrors` of reason `invalid`, the other rows `stopped` unless `skipInvalidRows`;
 *   insertId deduplication within a window; ≤ 50 000 rows and ≤ 10 MB per request;
 * - load jobs from a media upload (uploadType=multipart) of NEWLINE_DELIMITED_JSON: rows validated
 *   as a load does, all or nothing, WRITE_APPEND / WRITE_TRUNCATE / WRITE_EMPTY, 1 500 loads a
 *   table a day; the job is RUNNING in the answer to jobs.insert and DONE at jobs.get (after
 *   `loadJobMs`); tables with an `expirationTime` are deleted once it passes (load.ts);
 * - query jobs (jobs.query, jobs.insert + jobs.getQueryResults) that execute the SQL: GoogleSQL is
 *   rewritten for DuckDB (dialect.ts), array parameters in `UNNEST(@p)` become tables, MERGE
 *   refuses several source rows for one target row, DML is refused over rows in the streaming
 *   buffer and when another DML statement holds the same table, and a dataset is only found in its
 *   own location.
 * Faults (Google error bodies such as 403 rateLimitExceeded and 503 backendError, delays, a
 * response lost after the call was applied, a query answered before it completes) are switched on
 * per test through `fake.faults`. Counters: `fake.calls` per REST method, `fake.stats` (rows
 * inserted and deduplicated, statements by kind, DML per table, requests with credentials).
 *
 * A script of several statements runs them in order, each committed as it ends; INSERTs may run
 * side by side, UPDATE/DELETE/MERGE on one table may not. `queryLatencyMs` makes every query
 * answer that late, as BigQuery's take half a second or more.
 * Limits of the rewrite: arrays only as `UNNEST(@param)`; STRUCT and ARRAY columns, legacy SQL and
 * DDL other than ALTER COLUMN SET DATA TYPE and DROP TABLE are refused; bare
 * identifiers that DuckDB reserves but BigQuery does not (`at`, `order` is reserved in both) need
 * backticks, as connectors use anyway.
 * Column names are stricter than BigQuery's flexible names: the classic rules only.
 */
export { startBigQueryFake, type BigQueryFake, type BigQueryFakeOptions } from './server';
export type { Fault, FaultContext } from './faults';
