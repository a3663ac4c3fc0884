import { randomUUID } from 'node:crypto';
import { BigQuery } from '@google-cloud/bigquery';
import { PassThroughClient } from 'google-auth-library';
import { bigqueryConnector, type BigQuerySettings } from '../../../connectors/bigquery';
import type { DestinationWriter, RecordOutcome } from '../../../connectors/types';
import { createLogger } from '../../../src/core/logger';
import type { TrackedRecord } from '../../../src/core/records/types';
import { startBigQueryFake, type BigQueryFake, type BigQueryFakeOptions } from '../../fakes/bigquery';

export { event, json, props, session, user } from '../../helpers/record-builders';

export const PROJECT = 'tributary-test';

/** A dataset name no other test uses. */
export const uniqueDataset = (label = 'ds'): string => `${label}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

/** The real client against the fake, for reading back what the connector wrote. */
export function readerClient(fake: BigQueryFake, location = 'US'): BigQuery {
  return new BigQuery({ projectId: PROJECT, apiEndpoint: fake.url, authClient: new PassThroughClient(), autoRetry: false, maxRetries: 0, location });
}

export interface Fixture {
  dataset: string;
  writer: DestinationWriter;
  settings: BigQuerySettings;
  write: (records: TrackedRecord[]) => Promise<RecordOutcome[]>;
  /** Rows of a query through the real client; `@@` is replaced by the dataset's path prefix `tributary-test.<dataset>`. */
  query: (sql: string) => Promise<Array<Record<string, unknown>>>;
  close: () => Promise<void>;
}

export async function openWriter(fake: BigQueryFake, settings: Partial<BigQuerySettings> = {}): Promise<Fixture> {
  const dataset = settings.dataset ?? uniqueDataset();
  const full = bigqueryConnector.settingsSchema.parse({ projectId: PROJECT, dataset, endpoint: fake.url, ...settings });
  const writer = await bigqueryConnector.open({ trackerId: 'trk', destinationId: 'bq', settings: full, dataDir: '/nonexistent', logger: createLogger('silent'), now: () => new Date() });
  const client = readerClient(fake, full.location ?? 'US');
  return {
    dataset,
    writer,
    settings: full,
    write: (records) => writer.write(records, new AbortController().signal),
    query: async (sql) => {
      const [rows] = await client.query({ query: sql.replace(/@@/g, `${PROJECT}.${dataset}`), location: full.location ?? 'US' });
      return rows as Array<Record<string, unknown>>;
    },
    close: () => writer.close(),
  };
}

/**
 * What the `use…` helpers below set up for a test file. Their hooks fill it in, so read it only
 * inside tests and hooks.
 */
export interface FakeHandle {
  fake: BigQueryFake;
}

/** One fake for the test file, started before its tests and closed after; faults a test sets are cleared after it. */
export function useBigQueryFake(options?: BigQueryFakeOptions): FakeHandle {
  const handle = {} as FakeHandle;
  beforeAll(async () => {
    handle.fake = await startBigQueryFake(options);
  });
  afterEach(() => handle.fake.faults.clear());
  afterAll(() => handle.fake.close());
  return handle;
}

export interface WriterHandle extends FakeHandle {
  fx: Fixture;
}

/** {@link useBigQueryFake}, and for each test a writer on a dataset of its own, opened with the fake's counters reset. */
export function useWriterPerTest(): WriterHandle {
  const handle = useBigQueryFake() as WriterHandle;
  beforeEach(async () => {
    handle.fx = await openWriter(handle.fake);
    handle.fake.resetCounters();
  });
  afterEach(() => handle.fx.close());
  return handle;
}

export interface DatasetHandle extends FakeHandle {
  /** The real client on the fake. */
  client: BigQuery;
  /** A dataset created for the test file. */
  dataset: string;
}

/** {@link useBigQueryFake} with the real client on it and one dataset, for tests of the fake itself. */
export function useFakeDataset(options?: BigQueryFakeOptions): DatasetHandle {
  const handle = useBigQueryFake(options) as DatasetHandle;
  handle.dataset = uniqueDataset();
  beforeAll(async () => {
    handle.client = readerClient(handle.fake);
    await handle.client.createDataset(handle.dataset);
  });
  return handle;
}

export const statuses = (outcomes: readonly RecordOutcome[]): string[] => outcomes.map((o) => o.status);

/** Retries a write the way the delivery loop does (same batch, then only `retry` records), up to `attempts`. */
export async function writeUntilSettled(fx: Fixture, records: TrackedRecord[], attempts = 20): Promise<Map<string, RecordOutcome>> {
  const settled = new Map<string, RecordOutcome>();
  let pending = records;
  for (let i = 0; i < attempts && pending.length > 0; i++) {
    let outcomes: RecordOutcome[];
    try {
      outcomes = await fx.write(pending);
    } catch {
      continue;
    }
    pending.forEach((r, j) => settled.set(r.id, outcomes[j]!));
    pending = pending.filter((_, j) => outcomes[j]!.status === 'retry');
  }
  return settled;
}
