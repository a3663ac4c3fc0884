import { randomUUID } from 'node:crypto';
import type { TrackedRecord } from '../../../src/core/records/types';
import { SheetsFake } from '../../fakes/sheets';
import { writeInChild } from '../fixtures/write-in-child';
import { startHttpProxy, type HttpProxy } from '../../helpers/http-proxy';
import { rowsOf } from './harness';

/**
 * HTTPS_PROXY and NO_PROXY, read by googleapis' gaxios, reach the Sheets calls (they used to go
 * out directly: Node's fetch ignores the proxy agent gaxios picks). The connector runs in a child
 * process, with gaxios as in production.
 */
let fake: SheetsFake;
let proxy: HttpProxy;
let spreadsheetId: string;
beforeEach(async () => {
  fake = await SheetsFake.start();
  spreadsheetId = fake.createSpreadsheet('Proxy test').id;
  proxy = await startHttpProxy();
});
afterEach(async () => {
  await fake.close();
  await proxy.close();
});

const port = () => new URL(fake.url).port;
const now = () => new Date().toISOString();
const event = (n: number): TrackedRecord => ({ kind: 'event', id: randomUUID(), receivedAt: now(), eventAt: now(), event: 'view', properties: Object.assign(Object.create(null), { n }) });
const user = (uid: string, plan: string): TrackedRecord => ({ kind: 'user', id: randomUUID(), receivedAt: now(), uid, properties: Object.assign(Object.create(null), { plan }) });
const settings = (endpoint: string) => ({ spreadsheetId, endpoint, rollover: 'none' });

test('with HTTPS_PROXY set, every Sheets call goes through the proxy', async () => {
  // A host that resolves nowhere: only the proxy (which connects to 127.0.0.1) can reach the fake.
  const result = await writeInChild('google-sheets', settings(`http://sheets.proxy-test.invalid:${port()}/`), [user('u1', 'pro'), event(1)], { HTTPS_PROXY: proxy.url });
  expect(result).toEqual({ outcomes: ['ok', 'ok'] });
  expect(rowsOf(fake.values(spreadsheetId, 'users'))).toMatchObject([{ _uid: 'u1', plan: 'pro' }]);
  // spreadsheets.get, values.batchGet, spreadsheets.batchUpdate (the tabs), values.batchUpdate (the rows).
  expect(fake.requests.length).toBeGreaterThanOrEqual(3);
  expect(proxy.tunnels.length).toBeGreaterThanOrEqual(1);
  expect(new Set(proxy.tunnels)).toEqual(new Set([`sheets.proxy-test.invalid:${port()}`]));
});

test('lower-case https_proxy works the same; a host outside NO_PROXY is proxied', async () => {
  const result = await writeInChild('google-sheets', settings(fake.url), [event(1)], { https_proxy: proxy.url, NO_PROXY: '.example.com' });
  expect(result).toEqual({ outcomes: ['ok'] });
  expect(new Set(proxy.tunnels)).toEqual(new Set([`127.0.0.1:${port()}`]));
});

test('a host in NO_PROXY is reached directly', async () => {
  const result = await writeInChild('google-sheets', settings(fake.url), [event(1)], { HTTPS_PROXY: proxy.url, NO_PROXY: 'localhost, 127.0.0.1' });
  expect(result).toEqual({ outcomes: ['ok'] });
  expect(proxy.tunnels).toEqual([]);
  expect(rowsOf(fake.values(spreadsheetId, 'events'))).toMatchObject([{ n: 1 }]);
});

test('a proxy that wants credentials: without them delivery pauses (ConfigurationError), with them in HTTPS_PROXY it writes', async () => {
  const guarded = await startHttpProxy({ credentials: 'relay:s3cret' });
  try {
    const refused = await writeInChild('google-sheets', settings(fake.url), [event(1)], { HTTPS_PROXY: guarded.url });
    expect(refused).toMatchObject({ error: { kind: 'configuration', message: expect.stringContaining('give its credentials in HTTPS_PROXY') } });
    const withCredentials = guarded.url.replace('http://', 'http://relay:s3cret@');
    expect(await writeInChild('google-sheets', settings(fake.url), [event(2)], { HTTPS_PROXY: withCredentials })).toEqual({ outcomes: ['ok'] });
    expect(rowsOf(fake.values(spreadsheetId, 'events'))).toMatchObject([{ n: 2 }]);
  } finally {
    await guarded.close();
  }
});

test('a proxy that cannot be reached: a retryable error, nothing written', async () => {
  const closed = proxy.url;
  await proxy.close();
  const result = await writeInChild('google-sheets', settings(fake.url), [event(1)], { HTTPS_PROXY: closed });
  expect(result).toMatchObject({ error: { kind: 'retryable', message: expect.stringContaining('no answer from the Sheets API') } });
  expect(fake.requests).toEqual([]);
  proxy = await startHttpProxy();
});
