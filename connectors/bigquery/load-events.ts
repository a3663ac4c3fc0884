import { createHash, randomUUID } from 'node:crypto';
import type { TrackedRecord } from '../../src/core/records/types';
import { sleep } from '../../src/core/sleep';
import { RetryableError, type ConnectorError } from '../errors';
import { uniqueById } from '../shared/batch-records';
import { writeStopped } from '../shared/write-guard';
import type { RecordOutcome } from '../types';
import type { FieldSchema, JobStatus } from './client';
import { toConnectorError } from './errors';
import { tablePath } from './merge-sql';
import { timestamp } from './query-params';
import { withTableLock } from './table-lock';
import { eventTimeRange } from './stored-events';
import { eventRow, prepareEventColumns, writeEvents } from './write-events';
import type { PartResult, WriteDeps } from './write-part';

/**
 * History (a backfill, an import) into BigQuery as a data team loads it: a chunk of events is one
 * load job into a staging table and one statement that appends the rows whose `_id` the events
 * table does not hold yet. Load jobs are free and outside the streaming quotas; a chunk of 20 000
 * events costs four API calls (tables.insert of the stage, the load with its data, jobs.get until
 * it is done, jobs.query of the script) where insertAll with its look-up took 160.
 *
 * Exactly once, whatever fails between the steps:
 * - the stage is named after the chunk (its ids and columns), and each load replaces its rows
 *   (WRITE_TRUNCATE): a chunk loaded twice, or again after a worker died, is in it once;
 * - the script inserts only rows whose `_id` is not in the events of the chunk's days, then drops
 *   the stage: run again after a lost answer, or by the next holder of the destination, it inserts
 *   nothing twice, however long after (no insertId window is involved);
 * - the stage is made with an expiration of a day, so BigQuery removes one left by a chunk that is
 *   never retried.
 * A load BigQuery refuses for a row's value (`invalid`) sends the chunk the streaming way instead,
 * which settles each row on its own: a refused row is dead-lettered with BigQuery's message, as live
 * rows are.
 */

/** A chunk smaller than this goes the streaming way: a load job's fixed cost buys nothing there. */
export const LOAD_MIN_EVENTS = 1000;

/** BigQuery deletes a stage left behind after this long. */
const STAGE_TTL_MS = 24 * 3_600_000;

/** jobs.get while a load runs: after a second (a load of 20 000 rows takes one to a few), then less often. */
const POLL_MS = [1000, 1000, 2000, 4000];

/**
 * Rows of one load at most (as JSON lines): the worker holds them as one buffer, so a chunk of wide
 * payloads goes as several loads. BigQuery takes far more per load (a JSON row up to 100 MB).
 */
export const MAX_LOAD_BYTES = 64 * 1024 * 1024;

/** Mapping events to rows takes the event loop this many at a time, so that live requests beside it wait little. */
const SLICE = 500;

/**
 * The stage's type of a column: INT64, BIGNUMERIC and JSON values travel as text and are cast by
 * the statement (a load would read a JSON string into a JSON column as a string, not as the JSON
 * it holds), the others as themselves.
 */
function stageType(type: string): string {
  return ['INTEGER', 'INT64', 'BIGNUMERIC', 'BIGDECIMAL', 'JSON'].includes(type.toUpperCase()) ? 'STRING' : type;
}

/** The stage's column read back as the events table's type. */
function castFromStage(field: FieldSchema): string {
  const col = `s.\`${field.name}\``;
  switch (field.type.toUpperCase()) {
    case 'INTEGER':
    case 'INT64':
      return `CAST(${col} AS INT64)`;
    case 'BIGNUMERIC':
    case 'BIGDECIMAL':
      return `CAST(${col} AS BIGNUMERIC)`;
    case 'JSON':
      return `PARSE_JSON(${col})`;
    default:
      return col;
  }
}

const stageValue = (value: unknown): unknown => (typeof value === 'bigint' || typeof value === 'number' ? String(value) : value);

/** A stage's name: the same chunk with the same columns always gets the same one. */
function stageName(events: readonly TrackedRecord[], fields: readonly FieldSchema[]): string {
  const hash = createHash('sha256');
  for (const e of events) hash.update(e.id).update('\n');
  for (const f of fields) hash.update(`${f.name}:${f.type}\n`);
  return `tributary_stage_${hash.digest('hex').slice(0, 24)}`;
}

async function waitForJob(deps: WriteDeps, created: JobStatus, signal: AbortSignal): Promise<JobStatus> {
  let job = created;
  const jobId = created.jobReference?.jobId;
  for (let i = 0; job.status?.state !== 'DONE'; i++) {
    if (!jobId) throw new RetryableError('BigQuery answered a load without a job to wait for', { reason: 'noJob' });
    await sleep(POLL_MS[Math.min(i, POLL_MS.length - 1)]!, signal).catch(() => Promise.reject(writeStopped()));
    job = await deps.api.getJob(jobId, signal);
  }
  return job;
}

/** A failed load job's error, as the connector errors of a call would be. */
function loadFailure(job: JobStatus, stage: string): ConnectorError {
  const result = job.status!.errorResult!;
  const details = (job.status?.errors ?? []).slice(1, 4).map((e) => e.message).join('; ');
  const shape = { code: 400, errors: [{ reason: result.reason, message: `${result.message ?? ''}${details ? ` (${details})` : ''}` }], message: result.message };
  return toConnectorError(shape, `load job into ${stage}`);
}

/** Rows of one load, mapped for the stage: their JSON lines, and the columns they fill. */
interface LoadGroup {
  events: TrackedRecord[];
  lines: string[];
  touched: Set<string>;
  bytes: number;
}

const newGroup = (): LoadGroup => ({ events: [], lines: [], touched: new Set(), bytes: 0 });

/**
 * Events of a history batch, loaded (see above), in loads of at most `maxLoadBytes` of rows: a
 * chunk of wide webhook payloads (tens of KB each) is several loads, each with its own stage and
 * statement, rather than one string of a gigabyte in the worker. Outcomes as writeEvents gives
 * them; a whole request that failed leaves the chunk unsettled, to be written again (the loads
 * already appended insert nothing twice).
 */
export async function loadEvents(deps: WriteDeps, records: readonly TrackedRecord[], signal: AbortSignal, maxLoadBytes = MAX_LOAD_BYTES): Promise<PartResult> {
  const events = uniqueById(records);
  const { state, plan } = await prepareEventColumns(deps, events, signal);
  const outcomes = new Map<string, RecordOutcome>();
  let group = newGroup();
  for (let i = 0; i < events.length; i += SLICE) {
    for (const record of events.slice(i, i + SLICE)) {
      const { json } = eventRow(record, plan.columns).row;
      for (const name of Object.keys(json)) {
        group.touched.add(name);
        json[name] = stageValue(json[name]);
      }
      const line = JSON.stringify(json);
      const bytes = Buffer.byteLength(line) + 1;
      if (group.events.length > 0 && group.bytes + bytes > maxLoadBytes) {
        const failed = await loadGroup(deps, state.fields, group, outcomes, signal);
        if (failed) return failed;
        group = newGroup();
        for (const name of Object.keys(json)) group.touched.add(name);
      }
      group.events.push(record);
      group.lines.push(line);
      group.bytes += bytes;
    }
    if (i + SLICE < events.length) await new Promise((resolve) => setImmediate(resolve));
  }
  if (group.events.length > 0) {
    const failed = await loadGroup(deps, state.fields, group, outcomes, signal);
    if (failed) return failed;
  }
  return { outcomes };
}

/**
 * One load: stage, load job, statement. Settles the group's events in `outcomes`; returns a part
 * result only when the load was refused for a value and the streaming way left something unsettled.
 */
async function loadGroup(deps: WriteDeps, tableFields: readonly FieldSchema[], group: LoadGroup, outcomes: Map<string, RecordOutcome>, signal: AbortSignal): Promise<PartResult | undefined> {
  const fields = tableFields.filter((f) => group.touched.has(f.name));
  const stage = stageName(group.events, fields);
  const table = deps.schema.tableName('event');
  try {
    await deps.api.createTable(stage, { fields: fields.map((f) => ({ name: f.name, type: stageType(f.type), mode: 'NULLABLE' })) }, signal, Date.now() + STAGE_TTL_MS);
  } catch (err) {
    if ((err as ConnectorError).details?.status !== 409) throw err;
  }
  const created = await deps.api.loadJson(stage, Buffer.from(group.lines.join('\n')), { writeDisposition: 'WRITE_TRUNCATE' }, `tributary_load_${randomUUID().replace(/-/g, '')}`, signal);
  const job = await waitForJob(deps, created, signal);
  if (job.status?.errorResult) {
    const error = loadFailure(job, stage);
    if (error.kind !== 'permanent') throw error;
    // A value BigQuery refuses: each row settled on its own, the refused ones dead-lettered.
    const streamed = await writeEvents(deps, group.events, signal, () => true);
    for (const [id, o] of streamed.outcomes) outcomes.set(id, o);
    return streamed.error ? { outcomes, error: streamed.error } : undefined;
  }

  const { from, to } = eventTimeRange(group.events);
  const target = tablePath(deps.settings.projectId, deps.settings.dataset, table);
  const staged = tablePath(deps.settings.projectId, deps.settings.dataset, stage);
  const columns = fields.map((f) => `\`${f.name}\``).join(', ');
  // The `_event_at` range keeps the look-up to the group's days (the table is partitioned by them).
  const sql = [
    `INSERT INTO ${target} (${columns})`,
    `SELECT ${fields.map(castFromStage).join(', ')} FROM ${staged} AS s`,
    `WHERE NOT EXISTS (SELECT 1 FROM ${target} AS e WHERE e.\`_event_at\` BETWEEN @from AND @to AND e.\`_id\` = s.\`_id\`);`,
    `DROP TABLE ${staged};`,
  ].join('\n');
  await withTableLock(`${deps.settings.projectId}:${deps.settings.dataset}.${table}`, () => deps.api.query(sql, [timestamp('from', from), timestamp('to', to)], signal, `append of a loaded chunk to ${table}`), signal);
  for (const e of group.events) outcomes.set(e.id, { status: 'ok' });
  return undefined;
}
