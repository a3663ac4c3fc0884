import type { Table } from '@google-cloud/bigquery';
import { useFakeDataset } from '../../connectors/bigquery/helpers';

// The client's transport on Node's fetch under jest: see jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('./jest-transport')>('./jest-transport').teenyRequestOnNativeFetch());

const env = useFakeDataset();
let table: Table;
beforeAll(async () => {
  [table] = await env.client.dataset(env.dataset).createTable('t', { schema: { fields: [{ name: 'id', type: 'STRING' }] } });
});

const RAW = { raw: true, partialRetries: 0 };
const ids = async () => (await env.fake.rows('tributary-test', env.dataset, 't', 'id')).map((r) => r.id);

it('answers quota errors with Google’s body: 403 rateLimitExceeded, as many times as asked', async () => {
  env.fake.faults.rateLimit('tabledata.insertAll', 2);
  for (let i = 0; i < 2; i++) {
    await expect(table.insert([{ insertId: 'q', json: { id: 'q' } }], RAW)).rejects.toMatchObject({ code: 403, errors: [{ reason: 'rateLimitExceeded', domain: 'global' }], message: expect.stringContaining('Exceeded rate limits') });
  }
  await table.insert([{ insertId: 'q', json: { id: 'q' } }], RAW);
  expect(await ids()).toContain('q');
  expect(env.fake.faults.fired['tabledata.insertAll']).toBe(2);
});

it('answers 503 backendError without applying the call', async () => {
  env.fake.faults.backendError('tabledata.insertAll');
  await expect(table.insert([{ insertId: 'b', json: { id: 'b' } }], RAW)).rejects.toMatchObject({ code: 503, errors: [{ reason: 'backendError' }] });
  expect(await ids()).not.toContain('b');
});

it('loses the response after applying the call: the client sees a reset connection, the rows are stored', async () => {
  env.fake.faults.inject('tabledata.insertAll', { kind: 'lose-response' });
  const err = await table.insert([{ insertId: 'l', json: { id: 'l' } }], RAW).then(() => undefined, (e: unknown) => e as { code?: unknown });
  expect(err).toBeDefined();
  expect(err!.code).not.toBe(200);
  expect(await ids()).toContain('l');
});

it('delays a call: it still lands after the client would have given up', async () => {
  env.fake.faults.inject('tabledata.insertAll', { kind: 'delay', ms: 150 });
  const started = Date.now();
  await table.insert([{ insertId: 'd', json: { id: 'd' } }], RAW);
  expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  expect(await ids()).toContain('d');
});

it('matches faults on path parameters, e.g. one table only', async () => {
  const [other] = await env.client.dataset(env.dataset).createTable('other', { schema: { fields: [{ name: 'id', type: 'STRING' }] } });
  env.fake.faults.backendError('tabledata.insertAll', Infinity, (c) => c.path.tableId === 'other');
  await expect(other.insert([{ insertId: 'o', json: { id: 'o' } }], RAW)).rejects.toMatchObject({ code: 503 });
  await table.insert([{ insertId: 'm', json: { id: 'm' } }], RAW);
  expect(await ids()).toContain('m');
});

it('answers access errors as configured, e.g. 403 accessDenied on jobs.query', async () => {
  env.fake.faults.inject('jobs.query', { kind: 'error', status: 403, reason: 'accessDenied', message: 'Access Denied: Project tributary-test: User does not have bigquery.jobs.create permission in project tributary-test.' });
  await expect(env.client.query('SELECT 1')).rejects.toMatchObject({ code: 403, errors: [{ reason: 'accessDenied' }] });
});
