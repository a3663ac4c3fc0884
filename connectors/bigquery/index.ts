import { googleCloudSteps } from '../shared/google-setup';
import type { Connector } from '../types';
import { BigQuerySettingsSchema, type BigQuerySettings } from './config';
import { createBigQueryWriter } from './writer';

export { BigQuerySettingsSchema, resolveSettings, type BigQuerySettings } from './config';
export { baseColumnName, hashedColumnName } from './names';

/**
 * The `bigquery` connector: a tracker's records in a BigQuery dataset, through
 * `@google-cloud/bigquery` with the library's retries off (retries live in jobs/).
 *
 * ## Tables
 * Created on first use, with the dataset when it is missing (in `location`, default `US`):
 * - `events`: one row per event, partitioned by day on `_event_at`, clustered by `_event`, `_uid`;
 *   appended with tabledata.insertAll, `insertId` = `_id`. Events that may have landed already (a
 *   resend, or an attempt of this writer that got no answer) are looked up first (stored-events.ts)
 *   and not sent again: insertIds are forgotten after about a minute, a retry may come hours later.
 *   History (a backfill, an import) comes in chunks of 20 000 and goes by load jobs instead: a
 *   staging table, one load, one `INSERT … WHERE NOT EXISTS` (load-events.ts).
 * - `users` (one row per `_uid`) and `sessions` (one row per `_sid`), clustered by their key;
 *   written only by MERGE, never streamed (rows in the streaming buffer cannot be updated by DML).
 * Columns: the reserved ones (`_id`, `_uid`, `_sid`, `_event` STRING; `_event_at`, `_received_at`
 * TIMESTAMP, as the resource has them), `_context` JSON (ip, user agent, referer, when captured),
 * `_properties` JSON (all properties; for users and sessions the merged state), then one NULLABLE
 * column per property.
 *
 * ## Types
 * A property's column is created (tables.patch with the full schema) when the property first
 * arrives with a non-null value, typed from that value: whole numbers within 64 bits → INT64,
 * wider ones (up to 128 bits) → BIGNUMERIC, other numbers → FLOAT64, booleans → BOOL, strings →
 * STRING, objects and arrays → JSON. One change of type happens, the widening BigQuery allows by
 * DDL (ALTER COLUMN SET DATA TYPE; tables.patch refuses type changes): an INT64 column meeting a
 * fraction becomes FLOAT64, one meeting a whole number beyond 64 bits becomes BIGNUMERIC, stored
 * rows keeping their values (schema.ts). An INT64 column holding a whole number beyond 2^53 stays
 * INT64 (FLOAT64 would round it), as does one BigQuery refuses to alter. Any other value of another
 * type (a string in an INT64 column…) leaves that row's column NULL; the value is in `_properties`
 * (`JSON_VALUE(_properties, '$.plan')`). A whole number in a FLOAT64 column is stored as is within
 * 2^53; beyond, the cell is NULL rather than rounded. `null` never creates a column.
 *
 * Whole numbers beyond 2^53 go to INT64 and BIGNUMERIC as decimal strings in the insertAll JSON,
 * which BigQuery reads exactly. In `_properties` and JSON columns they are bare numbers within
 * INT64/UINT64 (what BigQuery's JSON type stores exactly) and strings with their digits beyond.
 *
 * ## Names
 * Columns follow BigQuery's rules (letters, digits, `_`; ≤ 300 characters; no reserved prefix;
 * case-insensitive). A property named by those rules keeps its name; otherwise other characters
 * become `_`, and a name not starting with a letter gets `p_` in front. When that name is already a
 * column of another property in any case (`Plan` after `plan`, `page-title` after `page_title`),
 * the property gets `<name>_<first 8 hex digits of SHA-256(property)>`. The column's description
 * records its property (`tributary property: <name>`), which is how the mapping survives restarts.
 * Beyond `maxColumns` property columns (default 9 990, BigQuery's 10 000 minus Tributary's own),
 * properties stay in `_properties` only.
 *
 * ## Users and sessions
 * Updates to one key in a batch are folded in order; the stored `_properties` of the batch's keys
 * are read (one SELECT), each key's state is computed (supplied properties replace, `null` clears,
 * others are kept) and one MERGE per table writes every key's state, with the rows as an
 * `ARRAY<STRUCT>` query parameter, holding the table so that one MERGE at a time runs per table.
 * GoogleSQL has no JSON merge whose paths may vary by row, hence the read. A session's `_uid` and a
 * row's `_context` keep their stored value when an update has none.
 *
 * ## Client library
 * Rows and parameters go to the library as opaque objects (opaque.ts): it would otherwise copy
 * every request body twice and replace the text `{{projectId}}` anywhere in it, data included.
 *
 * ## Errors
 * 403 `rateLimitExceeded` / `quotaExceeded`, 5xx `backendError`, DML concurrency conflicts,
 * timeouts and lost answers retry the batch (parts already written are not sent again); 404 (dataset
 * or table deleted) recreates it on the retry; a row refused as `invalid` is dead-lettered with
 * BigQuery's message, rows `stopped` by it are re-sent; 401/403 `accessDenied`, a disabled API and a
 * dataset in another location pause delivery with a readable message.
 */
export const bigqueryConnector: Connector<BigQuerySettings> = {
  type: 'bigquery',
  description: 'A BigQuery dataset: events partitioned by day and streamed, users and sessions merged by key.',
  settingsSchema: BigQuerySettingsSchema,
  setup: {
    primary: [
      { setting: 'projectId', label: 'Project ID', hint: 'The ID of the Google Cloud project (under its name on the dashboard, e.g. tributary-471210), not its name.' },
      { setting: 'dataset', label: 'Dataset', hint: 'Created if it does not exist, e.g. tributary.' },
    ],
    keySetting: 'credentials',
    afterKey: 'Grant {email} the roles BigQuery Data Editor (on the dataset, or the project so that Tributary may create it) and BigQuery Job User (on the project): IAM & Admin → Grant access → paste this address.',
    steps: [
      { text: 'Create a Google Cloud project, or choose one you have, and note its Project ID.', url: 'https://console.cloud.google.com/projectcreate' },
      { text: 'Link a billing account to the project: BigQuery accepts streamed rows only with billing (the free tier still applies).', url: 'https://console.cloud.google.com/billing/linkedaccount' },
      ...googleCloudSteps('BigQuery API', 'bigquery.googleapis.com', 'BigQuery Data Editor and BigQuery Job User').slice(1),
    ],
  },
  // 2 000 records make 4 insertAll requests of 500 rows (BigQuery's recommended size) and one
  // MERGE per table; a batch waits at most 1 s to fill. MERGEs on a table never overlap (one loop
  // per destination, one lock per table), far inside BigQuery's 2 running + 20 queued DML per table.
  batch: { maxRecords: 2000, maxAgeMs: 1000 },
  // History goes by load jobs (load-events.ts), a chunk each: 20 000 events are four API calls.
  // The history lane holds 40 000 records, so the next chunk is queued while one is written.
  historyBatchRecords: 20_000,
  async open(ctx) {
    return createBigQueryWriter(ctx);
  },
};
