import { readerClient, useFakeDataset } from '../../connectors/bigquery/helpers';
import { startBigQueryFake } from './';

// The client's transport on Node's fetch under jest: see jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('./jest-transport')>('./jest-transport').teenyRequestOnNativeFetch());

/** Query jobs run the SQL they are given: results are read back, not merely recorded. */
const env = useFakeDataset({ streamingBufferMs: 60_000, dmlLatencyMs: 0 });
let n = 0;

async function usersTable(): Promise<string> {
  const id = `users${++n}`;
  await env.client.dataset(env.dataset).createTable(id, { schema: { fields: [{ name: '_uid', type: 'STRING', mode: 'REQUIRED' }, { name: 'plan', type: 'STRING' }, { name: 'seats', type: 'INT64' }, { name: '_received_at', type: 'TIMESTAMP' }, { name: '_properties', type: 'JSON' }] } });
  return `\`tributary-test.${env.dataset}.${id}\``;
}

const MERGE = (t: string) => `MERGE INTO ${t} AS t USING (SELECT * FROM UNNEST(@rows)) AS s ON t.\`_uid\` = s.c0
  WHEN MATCHED THEN UPDATE SET \`plan\` = s.c1, \`seats\` = COALESCE(s.c2, t.\`seats\`), \`_received_at\` = s.c3, \`_properties\` = s.c4
  WHEN NOT MATCHED THEN INSERT (\`_uid\`, \`plan\`, \`seats\`, \`_received_at\`, \`_properties\`) VALUES (s.c0, s.c1, s.c2, s.c3, s.c4)`;
const TYPES = { rows: [{ c0: 'STRING', c1: 'STRING', c2: 'INT64', c3: 'TIMESTAMP', c4: 'JSON' }] };
const row = (uid: string, plan: string | null, seats: string | null) => ({ c0: uid, c1: plan, c2: seats, c3: env.client.timestamp('2026-03-01T10:00:00.250Z'), c4: JSON.stringify({ plan }) });

it('executes a MERGE with an ARRAY<STRUCT> parameter: updates matched rows, inserts the others', async () => {
  const t = await usersTable();
  await env.client.query({ query: MERGE(t), params: { rows: [row('u1', 'free', '1'), row('u2', 'pro', '5')] }, types: TYPES });
  const result = (await env.client.query({ query: MERGE(t), params: { rows: [row('u1', 'pro', null), row('u3', null, '2')] }, types: TYPES })) as unknown[];
  expect(result[2]).toMatchObject({ numDmlAffectedRows: '2', jobComplete: true });
  const [rows] = await env.client.query(`SELECT _uid, plan, seats, _received_at, JSON_VALUE(_properties, '$.plan') AS p FROM ${t} ORDER BY _uid`);
  expect(rows).toEqual([
    { _uid: 'u1', plan: 'pro', seats: 1, _received_at: env.client.timestamp('2026-03-01T10:00:00.250Z'), p: 'pro' },
    { _uid: 'u2', plan: 'pro', seats: 5, _received_at: env.client.timestamp('2026-03-01T10:00:00.250Z'), p: 'pro' },
    { _uid: 'u3', plan: null, seats: 2, _received_at: env.client.timestamp('2026-03-01T10:00:00.250Z'), p: null },
  ]);
  expect(env.fake.stats.dmlByTable[`tributary-test:${env.dataset}.users${n}`]).toBe(2);
});

it('refuses a MERGE with several source rows for one target row, changing nothing', async () => {
  const t = await usersTable();
  await env.client.query({ query: MERGE(t), params: { rows: [row('u1', 'free', '1')] }, types: TYPES });
  await expect(env.client.query({ query: MERGE(t), params: { rows: [row('u1', 'a', '2'), row('u1', 'b', '3')] }, types: TYPES })).rejects.toMatchObject({ code: 400, errors: [{ reason: 'invalidQuery', message: 'UPDATE/MERGE must match at most one source row for each target row' }] });
  const [rows] = await env.client.query(`SELECT plan FROM ${t}`);
  expect(rows).toEqual([{ plan: 'free' }]);
});

it('refuses DML over rows still in the streaming buffer', async () => {
  const t = await usersTable();
  await env.client.dataset(env.dataset).table(`users${n}`).insert([{ insertId: 'x', json: { _uid: 'u9' } }], { raw: true, partialRetries: 0 });
  await expect(env.client.query({ query: MERGE(t), params: { rows: [row('u9', 'x', null)] }, types: TYPES })).rejects.toMatchObject({ code: 400, message: expect.stringContaining('would affect rows in the streaming buffer') });
});

it('refuses a second DML statement on a table while one runs', async () => {
  const slow = await startBigQueryFake({ dmlLatencyMs: 300 });
  try {
    const client = readerClient(slow);
    await client.createDataset('d1');
    await client.dataset('d1').createTable('u', { schema: { fields: [{ name: '_uid', type: 'STRING' }, { name: 'plan', type: 'STRING' }] } });
    const sql = 'MERGE `tributary-test.d1.u` AS t USING (SELECT * FROM UNNEST(@rows)) AS s ON t._uid = s.c0 WHEN MATCHED THEN UPDATE SET plan = s.c1 WHEN NOT MATCHED THEN INSERT (_uid, plan) VALUES (s.c0, s.c1)';
    const run = (plan: string) => client.query({ query: sql, params: { rows: [{ c0: 'u1', c1: plan }] }, types: { rows: [{ c0: 'STRING', c1: 'STRING' }] } });
    const results = await Promise.allSettled([run('a'), run('b')]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason.message).toMatch(/Could not serialize access to table tributary-test:d1.u due to concurrent update/);
  } finally {
    await slow.close();
  }
});

it('finds a dataset only in its own location, and answers 404 for a missing table', async () => {
  const t = await usersTable();
  await expect(env.client.query({ query: `SELECT * FROM ${t}`, location: 'EU' })).rejects.toMatchObject({ code: 404, message: `Not found: Dataset tributary-test:${env.dataset} was not found in location EU` });
  await expect(env.client.query(`SELECT * FROM \`tributary-test.${env.dataset}.nope\``)).rejects.toMatchObject({ code: 404, errors: [{ reason: 'notFound' }] });
});

it('binds scalar and array parameters in SELECT', async () => {
  const t = await usersTable();
  await env.client.query({ query: MERGE(t), params: { rows: [row('u1', 'free', '1'), row('u2', 'pro', '5'), row('u3', 'pro', '9')] }, types: TYPES });
  const [rows] = await env.client.query({ query: `SELECT _uid FROM ${t} WHERE _uid IN UNNEST(@keys) AND seats > @min ORDER BY _uid`, params: { keys: ['u1', 'u2', 'zz'], min: 2 } });
  expect(rows).toEqual([{ _uid: 'u2' }]);
});

it('runs query jobs created with jobs.insert and answers jobs.getQueryResults', async () => {
  const t = await usersTable();
  await env.client.query({ query: MERGE(t), params: { rows: [row('u1', 'free', '1')] }, types: TYPES });
  const [job] = await env.client.createQueryJob({ query: `SELECT _uid, seats FROM ${t}`, jobId: `job_${n}` });
  const [rows] = await job.getQueryResults();
  expect(rows).toEqual([{ _uid: 'u1', seats: 1 }]);
  const [meta] = await job.getMetadata();
  expect(meta.status).toEqual({ state: 'DONE' });
  await expect(env.client.createQueryJob({ query: 'SELECT 1', jobId: `job_${n}` })).rejects.toMatchObject({ code: 409 });
});
