import type { BigQuery } from '@google-cloud/bigquery';


// The client's transport on Node's fetch under jest: see jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('./jest-transport')>('./jest-transport').teenyRequestOnNativeFetch());
import { readerClient, uniqueDataset } from '../../connectors/bigquery/helpers';
import { startBigQueryFake, type BigQueryFake } from './';

/** Datasets, tables and schema rules, driven by the real client. */
let fake: BigQueryFake;
let bq: BigQuery;
beforeAll(async () => {
  fake = await startBigQueryFake();
  bq = readerClient(fake);
});
afterAll(() => fake.close());

/** The error the client throws, as `{ code, reason, message }`. */
async function failure(p: Promise<unknown>): Promise<{ code: unknown; reason: unknown; message: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as { code?: unknown; errors?: Array<{ reason?: unknown }>; message: string };
    return { code: e.code, reason: e.errors?.[0]?.reason, message: e.message };
  }
  throw new Error('expected the call to fail');
}

const ID = { name: '_id', type: 'STRING', mode: 'REQUIRED' };
const AT = { name: '_event_at', type: 'TIMESTAMP', mode: 'REQUIRED' };
const N = { name: 'n', type: 'INT64' };
const fields = [ID, AT, N];

describe('datasets', () => {
  it('are created in a location, read back, and refused twice', async () => {
    const id = uniqueDataset();
    await bq.createDataset(id, { location: 'EU' });
    const [meta] = await bq.dataset(id).getMetadata();
    expect(meta).toMatchObject({ kind: 'bigquery#dataset', id: `tributary-test:${id}`, location: 'EU', datasetReference: { datasetId: id, projectId: 'tributary-test' } });
    expect(await failure(bq.createDataset(id, { location: 'EU' }))).toMatchObject({ code: 409, reason: 'duplicate' });
  });

  it('answer 404 notFound with Google error body when missing', async () => {
    expect(await failure(bq.dataset('missing_ds').getMetadata())).toEqual({ code: 404, reason: 'notFound', message: 'Not found: Dataset tributary-test:missing_ds' });
  });
});

describe('tables', () => {
  let ds: string;
  beforeAll(async () => {
    ds = uniqueDataset();
    await bq.createDataset(ds);
  });

  it('keep schema, time partitioning and clustering; types come back with their legacy names', async () => {
    await bq.dataset(ds).createTable('events', { schema: { fields }, timePartitioning: { type: 'DAY', field: '_event_at' }, clustering: { fields: ['_id'] } });
    const [meta] = await bq.dataset(ds).table('events').getMetadata();
    expect(meta.schema.fields).toEqual([
      { name: '_id', type: 'STRING', mode: 'REQUIRED' },
      { name: '_event_at', type: 'TIMESTAMP', mode: 'REQUIRED' },
      { name: 'n', type: 'INTEGER', mode: 'NULLABLE' },
    ]);
    expect(meta).toMatchObject({ timePartitioning: { type: 'DAY', field: '_event_at' }, clustering: { fields: ['_id'] }, numRows: '0' });
  });

  it.each([
    ['2fa', '2fa', 'start with a letter or underscore'],
    ['page-title', 'page-title', 'only letters, numbers, and underscores'],
    ['301 characters', 'a'.repeat(301), 'at most 300'],
    ['_PARTITIONTIME', '_PARTITIONTIME', 'reserved prefix _PARTITION'],
    ['_table_suffix', '_table_suffix', 'reserved prefix _TABLE_'],
    ['__root__x', '__root__x', 'reserved prefix __ROOT__'],
    ['_change_type', '_change_type', 'reserved prefix _CHANGE_TYPE'],
  ])('refuse the column name %s', async (_label, name, why) => {
    const f = await failure(bq.dataset(ds).createTable(`t_${Math.random().toString(36).slice(2)}`, { schema: { fields: [{ name, type: 'STRING' }] } }));
    expect(f).toMatchObject({ code: 400, reason: 'invalid' });
    expect(f.message).toContain(why);
  });

  it('refuse two column names that differ only in case, and partitioning on a non-TIMESTAMP column', async () => {
    expect((await failure(bq.dataset(ds).createTable('dup', { schema: { fields: [{ name: 'Plan', type: 'STRING' }, { name: 'plan', type: 'STRING' }] } }))).message).toContain('already exists');
    expect((await failure(bq.dataset(ds).createTable('part', { schema: { fields: [{ name: 'd', type: 'STRING' }] }, timePartitioning: { type: 'DAY', field: 'd' } }))).message).toContain('TIMESTAMP, DATE or DATETIME');
  });

  it('refuse more than 10 000 columns', async () => {
    const many = Array.from({ length: 10_001 }, (_, i) => ({ name: `c${i}`, type: 'STRING' }));
    expect((await failure(bq.dataset(ds).createTable('wide', { schema: { fields: many } }))).message).toContain('Too many fields');
  });
});

describe('tables.patch', () => {
  let ds: string;
  let n = 0;
  beforeAll(async () => {
    ds = uniqueDataset();
    await bq.createDataset(ds);
  });
  const fresh = async () => {
    const table = bq.dataset(ds).table(`p${++n}`);
    await bq.dataset(ds).createTable(table.id!, { schema: { fields } });
    return table;
  };

  it('adds NULLABLE columns with the full schema, keeping descriptions', async () => {
    const t = await fresh();
    await t.setMetadata({ schema: { fields: [...fields, { name: 'plan', type: 'STRING', mode: 'NULLABLE', description: 'tributary property: plan' }] } });
    const [meta] = await t.getMetadata();
    expect(meta.schema.fields.at(-1)).toEqual({ name: 'plan', type: 'STRING', mode: 'NULLABLE', description: 'tributary property: plan' });
  });

  it('refuses a REQUIRED addition, a type change and a missing column; relaxes REQUIRED to NULLABLE', async () => {
    const t = await fresh();
    expect((await failure(t.setMetadata({ schema: { fields: [...fields, { name: 'x', type: 'STRING', mode: 'REQUIRED' }] } }))).message).toContain('Cannot add required fields');
    expect((await failure(t.setMetadata({ schema: { fields: [ID, AT, { name: 'n', type: 'STRING' }] } }))).message).toContain('Field n has changed type from INTEGER to STRING');
    expect((await failure(t.setMetadata({ schema: { fields: [ID, AT] } }))).message).toContain('Field n is missing in new schema');
    await t.setMetadata({ schema: { fields: [{ ...ID, mode: 'NULLABLE' }, AT, N] } });
    const [meta] = await t.getMetadata();
    expect(meta.schema.fields[0].mode).toBe('NULLABLE');
  });

  it('allows 5 metadata updates per table per 10 s, then answers 403 rateLimitExceeded', async () => {
    const t = await fresh();
    for (let i = 0; i < 5; i++) await t.setMetadata({ schema: { fields: [...fields, ...Array.from({ length: i + 1 }, (_, j) => ({ name: `a${j}`, type: 'STRING' }))] } });
    const f = await failure(t.setMetadata({ schema: { fields: [...fields, ...Array.from({ length: 6 }, (_, j) => ({ name: `a${j}`, type: 'STRING' }))] } }));
    expect(f).toMatchObject({ code: 403, reason: 'rateLimitExceeded' });
  });
});
