import { RetryableError } from '../../../connectors/errors';
import { startBigQueryFake, type BigQueryFake } from '../../fakes/bigquery';
import { ManualClock } from '../../fakes/sheets/quota';
import { collectGarbageOften } from '../../helpers/gc';
import { event, openWriter, statuses, uniqueDataset, type Fixture } from './helpers';

// The client's transport on Node's fetch under jest: see test/fakes/bigquery/jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('../../fakes/bigquery/jest-transport')>('../../fakes/bigquery/jest-transport').teenyRequestOnNativeFetch());

/**
 * Events exactly once however late a retry comes: BigQuery forgets insertIds after about a
 * minute (the fake after 60 s of its clock), so a re-send must not rely on them.
 */
const clock = new ManualClock();
let fake: BigQueryFake;
const open: Fixture[] = [];

beforeAll(async () => {
  fake = await startBigQueryFake({ now: clock.now, dedupWindowMs: 60_000 });
});
afterEach(async () => {
  fake.faults.clear();
  await Promise.all(open.splice(0).map((fx) => fx.close()));
});
afterAll(() => fake.close());

async function writer(dataset: string, requestTimeoutMs?: number): Promise<Fixture> {
  const fx = await openWriter(fake, { dataset, ...(requestTimeoutMs ? { requestTimeoutMs } : {}) });
  open.push(fx);
  return fx;
}

const countOf = async (fx: Fixture, name: string) => Number((await fx.query(`SELECT COUNT(*) AS n FROM \`@@.events\` WHERE _event = '${name}'`))[0]!.n);

it.each([
  ['2 minutes', 2 * 60_000],
  ['2 hours', 2 * 3_600_000],
])('answer lost, the same writer retries %s later: one row each', async (label, delayMs) => {
  const fx = await writer(uniqueDataset());
  const name = `late_${delayMs}`;
  const events = Array.from({ length: 100 }, (_, i) => event(name, { i }));
  fake.faults.inject('tabledata.insertAll', { kind: 'lose-response' });
  await expect(fx.write(events)).rejects.toBeInstanceOf(RetryableError);
  clock.advance(delayMs);
  fake.resetCounters();
  expect(statuses(await fx.write(events))).toEqual(Array(100).fill('ok'));
  expect(await countOf(fx, name)).toBe(100);
  // Found by one look-up, not by BigQuery's insertId memory, which has lapsed.
  expect(fake.calls['tabledata.insertAll']).toBeUndefined();
  expect(fake.stats.rowsDeduplicated).toBe(0);
});

it('answer lost, then the process died: a new writer told it is a resend, 2 hours later, writes only what is missing', async () => {
  const dataset = uniqueDataset();
  const first = await writer(dataset);
  const landed = Array.from({ length: 50 }, (_, i) => event('restart', { i }));
  const missing = Array.from({ length: 30 }, (_, i) => event('restart', { i: 50 + i }));
  fake.faults.inject('tabledata.insertAll', { kind: 'lose-response' });
  await expect(first.write(landed)).rejects.toBeInstanceOf(RetryableError);
  clock.advance(2 * 3_600_000);
  const second = await writer(dataset);
  fake.resetCounters();
  const batch = [...landed, ...missing];
  expect(statuses(await second.writer.write(batch, new AbortController().signal, { resend: true }))).toEqual(Array(80).fill('ok'));
  expect(await countOf(second, 'restart')).toBe(80);
  expect(fake.calls['jobs.query']).toBeGreaterThanOrEqual(1);
  expect(fake.stats.rowsInserted).toBe(30);
});

it('first sends cost no look-up: a fresh batch is one insertAll and no query', async () => {
  const fx = await writer(uniqueDataset());
  await fx.write([event('warm', {})]);
  fake.resetCounters();
  expect(statuses(await fx.write(Array.from({ length: 20 }, () => event('fresh', {}))))).toEqual(Array(20).fill('ok'));
  expect(fake.calls).toEqual({ 'tabledata.insertAll': 1 });
});

it('a call that never answers is given up at requestTimeoutMs even while garbage is collected; the retry writes once', async () => {
  const fx = await writer(uniqueDataset(), 300);
  await fx.write([event('warm', {})]);
  const events = Array.from({ length: 10 }, () => event('hung', {}));
  const stopGc = collectGarbageOften(50);
  try {
    fake.faults.inject('tabledata.insertAll', { kind: 'hang' });
    await expect(fx.write(events)).rejects.toMatchObject({ kind: 'retryable', details: { reason: 'timeout' } });
    fake.faults.inject('jobs.query', { kind: 'hang' });
    await expect(fx.write(events)).rejects.toMatchObject({ kind: 'retryable', details: { reason: 'timeout' } });
  } finally {
    stopGc();
  }
  expect(statuses(await fx.write(events))).toEqual(Array(10).fill('ok'));
  expect(await countOf(fx, 'hung')).toBe(10);
}, 15_000);
