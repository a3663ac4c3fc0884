import type { Table } from '@google-cloud/bigquery';
import { useFakeDataset } from '../../connectors/bigquery/helpers';

// The client's transport on Node's fetch under jest: see jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('./jest-transport')>('./jest-transport').teenyRequestOnNativeFetch());

/** tabledata.insertAll through the real client's `table.insert(rows, { raw: true })`. */
const env = useFakeDataset({ dedupWindowMs: 60_000 });
let table: Table;
let n = 0;
beforeEach(async () => {
  [table] = await env.client.dataset(env.dataset).createTable(`t${++n}`, {
    schema: { fields: [{ name: 'id', type: 'STRING', mode: 'REQUIRED' }, { name: 'n', type: 'INT64' }, { name: 'x', type: 'FLOAT64' }, { name: 'ok', type: 'BOOL' }, { name: 'at', type: 'TIMESTAMP' }, { name: 'doc', type: 'JSON' }] },
  });
});

const RAW = { raw: true, skipInvalidRows: false, ignoreUnknownValues: false, partialRetries: 0 };
const rows = () => env.fake.rows('tributary-test', env.dataset, table.id!, 'id');

/** The insertErrors of a partial failure (the client throws PartialFailureError carrying the response). */
async function insertErrors(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return [];
  } catch (err) {
    const e = err as { name: string; response?: { insertErrors?: unknown } };
    if (e.name !== 'PartialFailureError') throw err;
    return e.response?.insertErrors;
  }
}

it('stores valid rows with every type, converting text forms', async () => {
  await table.insert([{ insertId: 'a', json: { id: 'a', n: '42', x: 1.5, ok: 'true', at: '2026-01-02 03:04:05.123456', doc: '{"k":[1,2]}' } }, { insertId: 'b', json: { id: 'b', n: 7, at: 1767225600 } }], RAW);
  expect(await rows()).toEqual([
    { id: 'a', n: '42', x: 1.5, ok: true, at: '2026-01-02 03:04:05.123456+00', doc: '{"k":[1,2]}' },
    { id: 'b', n: '7', x: null, ok: null, at: '2026-01-01 00:00:00+00', doc: null },
  ]);
});

it('refuses an unknown field and a bad value as invalid, and stops the other rows when skipInvalidRows is false', async () => {
  const errors = await insertErrors(table.insert([{ insertId: '1', json: { id: '1', plan: 'pro' } }, { insertId: '2', json: { id: '2' } }, { insertId: '3', json: { id: '3', n: 'many' } }], RAW));
  expect(errors).toEqual([
    { index: 0, errors: [{ reason: 'invalid', location: 'plan', debugInfo: '', message: 'no such field: plan.' }] },
    { index: 1, errors: [{ reason: 'stopped', location: '', debugInfo: '', message: '' }] },
    { index: 2, errors: [{ reason: 'invalid', location: 'n', debugInfo: '', message: 'Cannot convert value to integer (bad value): many' }] },
  ]);
  expect(await rows()).toEqual([]);
});

it('inserts the valid rows when skipInvalidRows is true, and reports a missing REQUIRED field', async () => {
  const errors = await insertErrors(table.insert([{ insertId: '1', json: { n: 1 } }, { insertId: '2', json: { id: '2', doc: 'not json' } }, { insertId: '3', json: { id: '3' } }], { ...RAW, skipInvalidRows: true }));
  expect(errors).toEqual([
    { index: 0, errors: [{ reason: 'invalid', location: 'id', debugInfo: '', message: 'Missing required field: id.' }] },
    { index: 1, errors: [expect.objectContaining({ reason: 'invalid', location: 'doc' })] },
  ]);
  expect((await rows()).map((r) => r.id)).toEqual(['3']);
});

it('drops rows whose insertId it has seen, within a request and across requests', async () => {
  await table.insert([{ insertId: 'same', json: { id: 'a' } }, { insertId: 'same', json: { id: 'a' } }], RAW);
  await table.insert([{ insertId: 'same', json: { id: 'a' } }, { insertId: 'other', json: { id: 'b' } }], RAW);
  expect((await rows()).map((r) => r.id)).toEqual(['a', 'b']);
});

it('refuses more than 50 000 rows and more than 10 MB in one request', async () => {
  const many = Array.from({ length: 50_001 }, (_, i) => ({ insertId: String(i), json: { id: String(i) } }));
  await expect(table.insert(many, RAW)).rejects.toMatchObject({ code: 400, errors: [{ reason: 'invalid', message: expect.stringContaining('too many rows present in the request, limit: 50000') }] });
  const big = Array.from({ length: 11 }, (_, i) => ({ insertId: String(i), json: { id: String(i), doc: JSON.stringify('x'.repeat(1024 * 1024)) } }));
  await expect(table.insert(big, RAW)).rejects.toMatchObject({ code: 400, errors: [{ reason: 'badRequest', message: 'Request payload size exceeds the limit: 10485760 bytes.' }] });
  expect(await rows()).toEqual([]);
});

it('counts calls per method', async () => {
  const before = env.fake.calls['tabledata.insertAll'] ?? 0;
  await table.insert([{ insertId: 'c', json: { id: 'c' } }], RAW);
  expect(env.fake.calls['tabledata.insertAll']).toBe(before + 1);
});

describe('integers beyond 2^53, as Google reads them', () => {
  let wide: Table;
  beforeEach(async () => {
    [wide] = await env.client.dataset(env.dataset).createTable(`w${++n}`, { schema: { fields: [{ name: 'id', type: 'STRING' }, { name: 'n', type: 'INT64' }, { name: 'big', type: 'BIGNUMERIC' }, { name: 'doc', type: 'JSON' }] } });
  });
  const wideRows = () => env.fake.rows('tributary-test', env.dataset, wide.id!, 'id');

  /** The request body as a client that writes exact JSON would send it: the real JavaScript client cannot. */
  const insertText = (body: string) =>
    fetch(`${env.fake.url}/bigquery/v2/projects/tributary-test/datasets/${env.dataset}/tables/${wide.id!}/insertAll`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => ({ status: r.status, body: (await r.json()) as { insertErrors?: unknown } }));

  it('takes INT64 and BIGNUMERIC as decimal strings, with every digit', async () => {
    await wide.insert([{ insertId: 'a', json: { id: 'a', n: '-603851970716743426', big: '-98765432109876543210', doc: '{"k":603851970716743426}' } }], RAW);
    expect(await wideRows()).toEqual([{ id: 'a', n: '-603851970716743426', big: '-98765432109876543210', doc: '{"k":603851970716743426}' }]);
  });

  it('reads a bare JSON number exactly, as Google does (only a JavaScript client would have rounded it)', async () => {
    const res = await insertText('{"rows":[{"insertId":"b","json":{"id":"b","n":603851970716743426,"big":12345678901234567890}}]}');
    expect(res).toMatchObject({ status: 200 });
    expect(res.body.insertErrors).toBeUndefined();
    expect(await wideRows()).toEqual([{ id: 'b', n: '603851970716743426', big: '12345678901234567890', doc: null }]);
  });

  it('refuses an INT64 beyond 64 bits, a fraction in this fake’s BIGNUMERIC, and a JSON number beyond INT64/UINT64', async () => {
    const errors = await insertErrors(
      wide.insert(
        [
          { insertId: '1', json: { id: '1', n: '9223372036854775808' } },
          { insertId: '2', json: { id: '2', big: '1.5' } },
          { insertId: '3', json: { id: '3', doc: '{"k":-98765432109876543210}' } },
        ],
        { ...RAW, skipInvalidRows: true },
      ),
    );
    expect(errors).toEqual([
      { index: 0, errors: [expect.objectContaining({ reason: 'invalid', location: 'n' })] },
      { index: 1, errors: [expect.objectContaining({ reason: 'invalid', location: 'big' })] },
      { index: 2, errors: [expect.objectContaining({ reason: 'invalid', location: 'doc', message: expect.stringContaining('loss of precision') })] },
    ]);
    expect(await wideRows()).toEqual([]);
  });
});
