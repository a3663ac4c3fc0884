import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { localConnector, queryWarehouse } from '../../connectors/local';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { partitionDeliveryKeys } from '../../jobs/delivery/keys';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { cliRunner, type CliRunner } from '../cli/run-cli';
import { startTestApi, type TestApi } from '../helpers/api';
import { CLI } from '../helpers/entries';
import { FAST_DELIVERY } from '../helpers/fast-worker';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

jest.setTimeout(120_000);

/**
 * `tributary import` with the real worker and the local warehouse: NDJSON with 2025 timestamps and
 * refused lines reported by number, the same file again (gzipped) doubling nothing, a CSV of users
 * landing as users, and an import killed with SIGKILL and run again ending with every line once.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-import-'));
const files = mkdtempSync(path.join(tmpdir(), 'tributary-import-files-'));
let api: TestApi;
let worker: WorkerRuntime;
let cli: CliRunner;

beforeAll(async () => {
  api = await startTestApi({ DATA_DIR: dataDir }, { destinations: [{ id: 'wh', type: 'local', enabled: true, settings: {} }] });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([localConnector] as Connector[]), createLogger('silent'), { discoverIntervalMs: 50, leaseMs: 5000, delivery: FAST_DELIVERY });
  cli = cliRunner(api.prefix);
});
afterAll(async () => {
  await worker.close();
  await api.close();
  cli.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(files, { recursive: true, force: true });
});

async function rows(sql: string): Promise<unknown[][] | undefined> {
  try {
    return (await queryWarehouse(path.join(dataDir, 'warehouse', `${api.tracker.id}.duckdb`), sql)).rows;
  } catch {
    return undefined;
  }
}

const count = async (sql: string): Promise<number | undefined> => (await rows(sql))?.[0]?.[0] as number | undefined;

/** A process's niceness, from /proc (the field after the state, ppid… : the 19th). */
function niceOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  } catch {
    return undefined;
  }
}

function file(name: string, content: string | Buffer): string {
  const p = path.join(files, name);
  writeFileSync(p, content);
  return p;
}

test('an NDJSON file: 2025 timestamps kept, refused lines reported by number, the rest delivered; the same file again (gzipped) doubles nothing', async () => {
  const lines = Array.from({ length: 40 }, (_, i) => JSON.stringify({ _event: 'legacy_order', _uid: `u${i % 7}`, _event_at: `2025-03-0${1 + (i % 9)}T10:00:00Z`, n: i }));
  lines.splice(2, 0, '{"_event": "broken",');
  lines.splice(5, 0, JSON.stringify({ _uid: 'no-event' }));
  lines.splice(7, 0, '');
  const text = lines.join('\n') + '\n';
  const ndjson = file('orders.ndjson', text);

  const first = await cli.run(['import', api.tracker.id, ndjson]);
  expect(first.code).toBe(0);
  expect(first.stdout).toContain('40 imported, 2 refused');
  expect(first.stdout).toMatch(/line 3: ERR_MALFORMED_JSON/);
  expect(first.stdout).toMatch(/line 6: ERR_MISSING_FIELD \(_event\)/);
  await waitFor(async () => (await count("SELECT count(*)::INT FROM events WHERE _event = 'legacy_order'")) === 40, { timeoutMs: 30_000, message: '40 imported events in the warehouse' });
  expect(await rows("SELECT min(_event_at)::VARCHAR, max(_event_at)::VARCHAR FROM events WHERE _event = 'legacy_order'")).toEqual([[expect.stringMatching(/^2025-03-01 10:00:00/), expect.stringMatching(/^2025-03-09 10:00:00/)]]);

  // The same lines, gzipped, under another name: every _id as before.
  const again = await cli.run(['import', api.tracker.id, file('copy.ndjson.gz', gzipSync(text)), '--json']);
  expect(again.code).toBe(0);
  expect(JSON.parse(again.stdout)).toEqual([expect.objectContaining({ imported: 40, failed: 2, errors: [expect.objectContaining({ line: 3 }), expect.objectContaining({ line: 6, field: '_event' })] })]);
  const lane = partitionDeliveryKeys(api.config.keyspace, { trackerId: api.tracker.id, destinationId: 'wh', partition: 0 }).historyQueued;
  await waitFor(async () => Number((await api.runtime.redis.get(lane)) ?? 0) === 0, { timeoutMs: 30_000, message: 'the history lane delivered' });
  expect(await count("SELECT count(*)::INT FROM events WHERE _event = 'legacy_order'")).toBe(40);
});

test('a CSV of users lands as users, its cells typed as a reader of the sheet would', async () => {
  const csv = file('users.csv', '_uid,email,plan,seats,zip,vip\nu1,a@example.com,pro,12,01234,true\nu2,b@example.com,free,,75001,false\n"u3","c@example.com","team","3.5","","true"\n');
  const out = await cli.ok(['import', api.tracker.id, csv, '--resource', 'users']);
  expect(out).toContain('3 imported, 0 refused');
  await waitFor(async () => (await count('SELECT count(*)::INT FROM users')) === 3, { timeoutMs: 30_000, message: 'three users' });
  // seats: numbers; zip: text with its leading zero, and 75001 a number, kept in _properties since the column is text.
  expect(await rows("SELECT _uid, plan, seats, zip, _properties->>'zip', vip FROM users ORDER BY _uid")).toEqual([
    ['u1', 'pro', 12, '01234', '01234', true],
    ['u2', 'free', null, null, '75001', false],
    ['u3', 'team', 3.5, null, null, true],
  ]);
});

test('an import killed with SIGKILL mid-file and run again ends with every line once', async () => {
  const total = 30_000;
  const big = file('big.ndjson', Array.from({ length: total }, (_, i) => JSON.stringify({ _event: 'bulk', _uid: `u${i % 100}`, _event_at: '2025-06-01T00:00:00Z', i })).join('\n'));
  const child = spawn(process.execPath, [CLI, 'import', api.tracker.id, big], {
    env: { ...process.env, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: api.prefix, DATA_DIR: cli.dataDir },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // The import yields the CPU to the rest of the host: nice 19 unless told otherwise (--nice).
  await waitFor(async () => niceOf(child.pid!) === 19 || child.exitCode !== null, { timeoutMs: 30_000, intervalMs: 20, message: 'the import at nice 19' });
  expect(niceOf(child.pid!)).toBe(19);
  // Killed once some of the file is delivered, before all of it is.
  await waitFor(async () => ((await count("SELECT count(*)::INT FROM events WHERE _event = 'bulk'")) ?? 0) > 0 || child.exitCode !== null, { timeoutMs: 60_000, intervalMs: 20, message: 'some of the file delivered' });
  child.kill('SIGKILL');
  await exited;
  const before = (await count("SELECT count(*)::INT FROM events WHERE _event = 'bulk'")) ?? 0;
  expect(before).toBeLessThan(total);

  // At the host's own priority this time: at nice 19 behind the rest of a loaded test run, the
  // 30 000 lines once took longer than the CLI's 30 s in this test.
  const out = await cli.ok(['import', api.tracker.id, big, '--nice', '0']);
  expect(out).toContain(`${total} imported, 0 refused`);
  await waitFor(async () => (await count("SELECT count(*)::INT FROM events WHERE _event = 'bulk'")) === total, { timeoutMs: 60_000, message: 'every line delivered' });
  await new Promise((r) => setTimeout(r, 1000));
  expect(await rows("SELECT count(*)::INT, count(DISTINCT i)::INT FROM events WHERE _event = 'bulk'")).toEqual([[total, total]]);
});

test('refusals: an unknown tracker, a file that is not there, a name that says no format', async () => {
  expect(await cli.fails(['import', 'nope', file('x.ndjson', '{}')])).toMatch(/No tracker with id "nope"/);
  expect(await cli.fails(['import', api.tracker.id, path.join(files, 'missing.ndjson')])).toMatch(/missing\.ndjson: no such file/);
  expect(await cli.fails(['import', api.tracker.id, file('data.txt', '{}')])).toMatch(/cannot tell its format.*--format/);
  expect(await cli.fails(['import', api.tracker.id, file('bad.json', '{"_event":"x"}')])).toMatch(/one JSON array/);
  expect(await cli.fails(['import', api.tracker.id, file('y.ndjson', '{}'), '--nice', '25'])).toMatch(/--nice.*a whole number from 0/);
});

describe('POST /v3/import/{kind}', () => {
  const post = (kind: string, body: string | Buffer, headers: Record<string, string> = {}, query = '') => {
    let req = api.http.post(`/v3/import/${kind}${query}`).set('Authorization', `Tracker ${api.token}`).set('Content-Type', 'application/x-ndjson');
    for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
    return req.send(body);
  };

  test('NDJSON pieces of one file: counts, refused lines by their number in the file, and each piece sent again doubles nothing', async () => {
    const piece = (from: number) => Array.from({ length: 50 }, (_, i) => (i === 10 ? '{"_event": 12}' : JSON.stringify({ _event: 'http_import', _event_at: '2025-01-15T08:00:00+01:00', n: from + i }))).join('\n');
    const first = await post('event', piece(1));
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ read: 50, imported: 49, failed: 1, duplicates: 0, errors: [{ line: 11, code: 'ERR_INVALID_FIELD', field: '_event', message: expect.stringContaining('_event') }] });
    const second = await post('event', gzipSync(piece(51)), { 'Content-Encoding': 'gzip' }, '?first_line=51');
    expect(second.body).toMatchObject({ imported: 49, errors: [{ line: 61 }] });
    await waitFor(async () => (await count("SELECT count(*)::INT FROM events WHERE _event = 'http_import'")) === 98, { timeoutMs: 30_000, message: '98 events from two pieces' });
    expect(await rows("SELECT DISTINCT _event_at::VARCHAR FROM events WHERE _event = 'http_import'")).toEqual([[expect.stringMatching(/^2025-01-15 07:00:00/)]]);

    // The second piece again, as a script that lost its answer would send it.
    expect((await post('event', piece(51), {}, '?first_line=51')).status).toBe(200);
    const lane = partitionDeliveryKeys(api.config.keyspace, { trackerId: api.tracker.id, destinationId: 'wh', partition: 0 }).historyQueued;
    await waitFor(async () => Number((await api.runtime.redis.get(lane)) ?? 0) === 0, { timeoutMs: 30_000, message: 'the history lane delivered' });
    expect(await count("SELECT count(*)::INT FROM events WHERE _event = 'http_import'")).toBe(98);
  });

  test('a CSV body of sessions; refusals as JSON errors', async () => {
    const csv = await post('session', '_sid,_uid,landing\ns1,u1,/home\ns2,u2,/pricing\n', { 'Content-Type': 'text/csv' });
    expect(csv.body).toMatchObject({ imported: 2, failed: 0 });
    await waitFor(async () => (await count("SELECT count(*)::INT FROM sessions WHERE _sid IN ('s1', 's2')")) === 2, { timeoutMs: 30_000, message: 'two sessions' });

    const none = await post('event', '{"no": "event"}\nnot json\n');
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ error: { code: 'ERR_NO_VALID_RECORDS' }, failed: 2, errors: [{ line: 1, code: 'ERR_MISSING_FIELD' }, { line: 2, code: 'ERR_MALFORMED_JSON' }] });
    expect((await api.http.post('/v3/import/event').send('{}')).body.error.code).toBe('ERR_MISSING_TOKEN');
    expect((await post('event', '{}', { 'Content-Type': 'image/png' })).status).toBe(415);
    expect((await post('event', 'x', { 'Content-Encoding': 'br' })).status).toBe(415);
    expect((await post('event', 'not gzip', { 'Content-Encoding': 'gzip' })).body.error.code).toBe('ERR_MALFORMED_ENCODING');
    expect((await post('event', '{}', {}, '?first_line=0')).body.error).toMatchObject({ code: 'ERR_INVALID_FIELD', field: 'first_line' });
    expect((await post('widget', '{}')).status).toBe(404);
  });
});
