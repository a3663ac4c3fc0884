import { randomUUID } from 'node:crypto';
import type { TrackedRecord } from '../../../src/core/records/types';
import { startBigQueryFake, type BigQueryFake } from '../../fakes/bigquery';
import { writeInChild } from '../fixtures/write-in-child';
import { startHttpProxy, type HttpProxy } from '../../helpers/http-proxy';
import { PROJECT, uniqueDataset } from './helpers';

/**
 * HTTPS_PROXY / HTTP_PROXY and NO_PROXY, as @google-cloud/bigquery's transport (teeny-request)
 * reads them. The connector runs in a child process, with the library exactly as in production
 * (node-fetch, which jest cannot load).
 */
let fake: BigQueryFake;
let proxy: HttpProxy;
beforeAll(async () => {
  fake = await startBigQueryFake();
});
afterAll(() => fake.close());
beforeEach(async () => {
  proxy = await startHttpProxy();
});
afterEach(() => proxy.close());

const port = () => new URL(fake.url).port;
const now = () => new Date().toISOString();
const event = (n: number): TrackedRecord => ({ kind: 'event', id: randomUUID(), receivedAt: now(), eventAt: now(), event: 'view', properties: Object.assign(Object.create(null), { n }) });

test('with HTTPS_PROXY set, every BigQuery call goes through the proxy', async () => {
  const dataset = uniqueDataset();
  // A host that resolves nowhere: only the proxy (which connects to 127.0.0.1) can reach the fake.
  const endpoint = `http://bigquery.proxy-test.invalid:${port()}`;
  const result = await writeInChild('bigquery', { projectId: PROJECT, dataset, endpoint }, [event(1), event(2)], { HTTPS_PROXY: proxy.url });
  expect(result).toEqual({ outcomes: ['ok', 'ok'] });
  expect((await fake.rows(PROJECT, dataset, 'events', 'n')).map((r) => String(r.n))).toEqual(['1', '2']);
  // An http:// endpoint is reached through the proxy with absolute-URI requests (https:// through CONNECT).
  expect(proxy.forwarded.length).toBeGreaterThanOrEqual(4);
  expect(proxy.forwarded.every((r) => r.includes(`http://bigquery.proxy-test.invalid:${port()}/bigquery/v2/projects/${PROJECT}/`))).toBe(true);
});

test('a host in NO_PROXY is reached directly', async () => {
  const dataset = uniqueDataset();
  const result = await writeInChild('bigquery', { projectId: PROJECT, dataset, endpoint: fake.url }, [event(1)], { HTTPS_PROXY: proxy.url, no_proxy: '127.0.0.1' });
  expect(result).toEqual({ outcomes: ['ok'] });
  expect(proxy.forwarded).toEqual([]);
  expect(proxy.tunnels).toEqual([]);
});

test('a proxy that wants credentials: without them delivery pauses (ConfigurationError), with them in HTTPS_PROXY it writes', async () => {
  const guarded = await startHttpProxy({ credentials: 'relay:s3cret' });
  try {
    const dataset = uniqueDataset();
    const refused = await writeInChild('bigquery', { projectId: PROJECT, dataset, endpoint: fake.url }, [event(1)], { HTTPS_PROXY: guarded.url });
    expect(refused).toMatchObject({ error: { kind: 'configuration', message: expect.stringContaining('give its credentials in HTTPS_PROXY') } });
    const withCredentials = guarded.url.replace('http://', 'http://relay:s3cret@');
    expect(await writeInChild('bigquery', { projectId: PROJECT, dataset, endpoint: fake.url }, [event(2)], { HTTPS_PROXY: withCredentials })).toEqual({ outcomes: ['ok'] });
  } finally {
    await guarded.close();
  }
});
