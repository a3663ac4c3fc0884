import { once } from 'node:events';
import { Readable } from 'node:stream';
import type { Job, Table } from '@google-cloud/bigquery';
import { startBigQueryFake } from '.';
import { readerClient, useFakeDataset } from '../../connectors/bigquery/helpers';

// The client's transport on Node's fetch under jest: see jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('./jest-transport')>('./jest-transport').teenyRequestOnNativeFetch());

/** Load jobs through the real client's own `table.createWriteStream` (a multipart media upload, then polling jobs.get). */
const env = useFakeDataset();
let table: Table;
let n = 0;
beforeEach(async () => {
  [table] = await env.client.dataset(env.dataset).createTable(`t${++n}`, {
    schema: { fields: [{ name: 'id', type: 'STRING', mode: 'REQUIRED' }, { name: 'n', type: 'INT64' }, { name: 'at', type: 'TIMESTAMP' }, { name: 'doc', type: 'JSON' }] },
  });
});

const rows = () => env.fake.rows('tributary-test', env.dataset, table.id!, 'id');

/** Loads NDJSON lines with the library's upload; resolves the finished job's metadata, or rejects with its error. */
async function load(lines: unknown[], metadata: Record<string, unknown> = {}, into: Table = table): Promise<Record<string, unknown>> {
  const stream = into.createWriteStream({ sourceFormat: 'NEWLINE_DELIMITED_JSON', ...metadata });
  Readable.from([lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')]).pipe(stream);
  const [job] = (await once(stream, 'complete')) as [Job];
  return job.metadata as Record<string, unknown>;
}

it('loads rows (values as a load reads them), appends by default, and reports RUNNING until jobs.get', async () => {
  const job = await load([{ id: 'a', n: 1, at: '2026-11-28T10:00:00Z', doc: { k: [1] } }, { id: 'b', n: '9007199254740993' }]);
  expect(job).toMatchObject({ status: { state: 'DONE' }, configuration: { jobType: 'LOAD' }, statistics: { load: { outputRows: '2', badRecords: '0' } } });
  expect(env.fake.calls['jobs.get']).toBeGreaterThanOrEqual(1);
  await load([{ id: 'c' }]);
  expect(await rows()).toEqual([
    { id: 'a', n: '1', at: '2026-11-28 10:00:00+00', doc: '{"k":[1]}' },
    { id: 'b', n: '9007199254740993', at: null, doc: null },
    { id: 'c', n: null, at: null, doc: null },
  ]);
});

it('WRITE_TRUNCATE replaces the rows; a job that fails loads nothing and says which row and field', async () => {
  await load([{ id: 'a' }, { id: 'b' }]);
  await load([{ id: 'z' }], { writeDisposition: 'WRITE_TRUNCATE' });
  expect((await rows()).map((r) => r.id)).toEqual(['z']);
  const failed = load([{ id: 'x' }, { id: 'y', extra: 1 }, { id: 'w', n: 'many' }]);
  await expect(failed).rejects.toMatchObject({ message: expect.stringContaining('JSON table encountered too many errors, giving up. Rows: 3; errors: 2.') });
  await expect(failed.catch((e: { errors: Array<{ message: string }> }) => e.errors.map((x) => x.message))).resolves.toEqual(
    expect.arrayContaining([expect.stringContaining('row starting at position 11: no such field: extra'), expect.stringContaining('Cannot convert value to integer (bad value): many')]),
  );
  expect((await rows()).map((r) => r.id)).toEqual(['z']);
  await load([{ id: 'v', extra: 1 }], { ignoreUnknownValues: true });
  await load(['{"id":"u"}', '{"id":'], { maxBadRecords: 1 });
  expect((await rows()).map((r) => r.id)).toEqual(['u', 'v', 'z']);
});

it('refuses what BigQuery refuses: another format, a missing table under CREATE_NEVER, a job id used before, the 1 500th+ load of a day', async () => {
  await expect(load(['a,b'], { sourceFormat: 'CSV' })).rejects.toMatchObject({ code: 400, message: expect.stringContaining('NEWLINE_DELIMITED_JSON only') });
  await expect(load([{ id: 'a' }], { createDisposition: 'CREATE_NEVER' }, env.client.dataset(env.dataset).table('missing'))).rejects.toMatchObject({ code: 404 });
  await load([{ id: 'a' }], { jobId: 'fixed-job' });
  await expect(load([{ id: 'b' }], { jobId: 'fixed-job' })).rejects.toMatchObject({ code: 409, message: expect.stringContaining('Already Exists: Job') });
  const strict = await startBigQueryFake({ loadJobsPerTablePerDay: 2 });
  try {
    const client = readerClient(strict);
    await client.createDataset('d');
    const [t] = await client.dataset('d').createTable('t', { schema: { fields: [{ name: 'id', type: 'STRING' }] } });
    await load([{ id: 'a' }], {}, t);
    await load([{ id: 'b' }], {}, t);
    await expect(load([{ id: 'c' }], {}, t)).rejects.toMatchObject({ code: 403, errors: [{ reason: 'quotaExceeded' }] });
  } finally {
    await strict.close();
  }
});

it('runs a script of statements in order, INSERTs side by side, DROP TABLE, and deletes a table past its expiration', async () => {
  await load([{ id: 'a', n: 1 }, { id: 'b', n: 2 }]);
  const t = `\`tributary-test.${env.dataset}.${table.id}\``;
  const [created] = await env.client.dataset(env.dataset).createTable(`copy${n}`, { schema: { fields: [{ name: 'id', type: 'STRING' }] }, expirationTime: String(Date.now() + 60_000) });
  const copy = `\`tributary-test.${env.dataset}.${created.id}\``;
  await Promise.all([env.client.query(`INSERT INTO ${copy} (id) SELECT id FROM ${t}`), env.client.query(`INSERT INTO ${copy} (id) SELECT id FROM ${t} WHERE n > 1`)]);
  await env.client.query(`INSERT INTO ${t} (id) SELECT CONCAT(id, '2') FROM ${copy} WHERE id = 'a'; DROP TABLE ${copy};`);
  expect((await rows()).map((r) => r.id)).toEqual(['a', 'a2', 'b']);
  expect(env.fake.table('tributary-test', env.dataset, created.id!)).toBeUndefined();
  const [soon] = await env.client.dataset(env.dataset).createTable(`soon${n}`, { schema: { fields: [{ name: 'id', type: 'STRING' }] }, expirationTime: String(Date.now() - 1) });
  await expect(soon.getMetadata()).rejects.toMatchObject({ code: 404 });
});
