import type { RecordKind, TrackedRecord } from '../../src/core/records/types';
import { ConfigurationError, ConnectorError, PermanentError, RetryableError } from '../errors';
import type { DestinationContext, DestinationWriter, RecordOutcome, WriteOptions } from '../types';
import { LOAD_MIN_EVENTS, loadEvents } from './load-events';
import { BigQueryApi } from './client';
import { resolveSettings, type BigQuerySettings } from './config';
import { guardWrite } from '../shared/write-guard';
import { RecentIds } from './recent-ids';
import { SchemaCache } from './schema';
import { writeEvents } from './write-events';
import type { PartResult, WriteDeps } from './write-part';
import { writeUpserts } from './write-upserts';

const OK: RecordOutcome = { status: 'ok' };
const KINDS: readonly RecordKind[] = ['user', 'session', 'event'];

/** Configuration problems pause delivery, so they win over retryable ones when parts disagree. */
function mostSevere(errors: readonly ConnectorError[]): ConnectorError {
  return errors.find((e) => e instanceof ConfigurationError) ?? errors[0]!;
}

const asConnectorError = (err: unknown): ConnectorError => (err instanceof ConnectorError ? err : new RetryableError(`unexpected error: ${(err as Error)?.message ?? String(err)}`, { cause: err }));

/**
 * Writes a batch: users and sessions (one MERGE per table) and events (insertAll) run side by
 * side, as they touch different tables. Records a part settled get their outcome; when a part could
 * not finish (quota, 5xx, timeout, lost answer, deleted table), what was written is remembered and
 * the error is thrown so that the delivery loop retries the batch; the retry writes only the rest.
 * A whole part refused for good (400) dead-letters that part's records, not the batch.
 */
export function createBigQueryWriter(ctx: DestinationContext<BigQuerySettings>): DestinationWriter {
  const settings = resolveSettings(ctx.settings);
  const api = new BigQueryApi(settings);
  const schema = new SchemaCache(api, settings, ctx.logger);
  const deps: WriteDeps = { api, schema, settings };
  const written = new RecentIds(200_000);
  /** Events sent without a definite answer: looked up before they are sent again. */
  const unsure = new RecentIds(200_000);
  let closed = false;

  const guard = (signal: AbortSignal) => guardWrite('the BigQuery writer', closed, signal);

  const runPart = (kind: RecordKind, records: readonly TrackedRecord[], signal: AbortSignal, options: WriteOptions | undefined): Promise<PartResult> => {
    if (kind !== 'event') return writeUpserts(deps, kind, records, signal);
    if (options?.history && records.length >= LOAD_MIN_EVENTS) return loadEvents(deps, records, signal);
    return writeEvents(deps, records, signal, (id) => options?.resend === true || unsure.has(id));
  };

  return {
    async write(records, signal, options) {
      guard(signal);
      const pending = records.filter((r) => !written.has(r.id));
      if (pending.length === 0) return records.map(() => OK);
      await schema.ensureDataset(signal);
      const groups = KINDS.map((kind) => ({ kind, records: pending.filter((r) => r.kind === kind) })).filter((g) => g.records.length > 0);
      const settled = await Promise.allSettled(groups.map((g) => runPart(g.kind, g.records, signal, options)));
      const outcomes = new Map<string, RecordOutcome>();
      const errors: ConnectorError[] = [];
      settled.forEach((s, i) => {
        const error = s.status === 'rejected' ? asConnectorError(s.reason) : s.value.error;
        if (s.status === 'fulfilled') for (const [id, o] of s.value.outcomes) outcomes.set(id, o);
        if (error instanceof PermanentError && s.status === 'rejected') {
          for (const r of groups[i]!.records) outcomes.set(r.id, { status: 'failed', error });
        } else if (error) errors.push(error);
      });
      for (const [id, o] of outcomes) if (o.status === 'ok') written.add(id);
      for (const r of pending) if (r.kind === 'event' && !outcomes.has(r.id)) unsure.add(r.id);
      if (errors.length > 0) {
        // A deleted dataset or table: look it up (and recreate it) on the retry.
        if (errors.some((e) => e.details.status === 404)) schema.forget();
        throw mostSevere(errors);
      }
      return records.map((r) => (written.has(r.id) ? OK : (outcomes.get(r.id) ?? { status: 'retry', error: new RetryableError('no outcome for this record') })));
    },
    async test(signal) {
      guard(signal);
      await schema.ensureDataset(signal);
      for (const kind of KINDS) await schema.table(kind, signal);
      // Proves the credentials may run query jobs (bigquery.jobs.create), which the MERGEs need.
      await api.query('SELECT 1 AS ok', [], signal, 'test query');
    },
    async close() {
      closed = true;
    },
  };
}
