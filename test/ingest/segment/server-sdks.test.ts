import { Analytics } from '@segment/analytics-node';
import RudderAnalytics from '@rudderstack/rudder-sdk-node';
import { startTestApi, type TestApi } from '../../helpers/api';
import { listen, type Listening } from '../../helpers/raw-http';
import { startLossyHop, type LossyHop } from './lossy-hop';

/**
 * The real server-side SDKs from npm, pointed at the relay by their host option alone:
 * `@segment/analytics-node` (Segment's Node library) and `@rudderstack/rudder-sdk-node`.
 */
let api: TestApi;
let relay: Listening;
let hop: LossyHop;
beforeAll(async () => {
  api = await startTestApi();
  relay = await listen(api.runtime.app);
  hop = await startLossyHop(relay.port);
});
afterAll(async () => {
  await hop.close();
  await relay.close();
  await api.close();
});

type Stored = Awaited<ReturnType<TestApi['queuedRecords']>>[number];

/** The records of one tracker the router delivers (repeats of a messageId left out), in queue order. */
async function storedFor(trackerId: string): Promise<Stored[]> {
  return (await api.storedRecords()).filter((r) => r.trackerId === trackerId);
}

interface SentBatch {
  batch: Array<{ messageId: string; type: string }>;
}

function segmentClient(token: string, host: string) {
  const analytics = new Analytics({ writeKey: token, host, flushAt: 20, flushInterval: 50, maxRetries: 4 });
  const statuses: number[] = [];
  const sent: SentBatch[] = [];
  analytics.on('http_request', (r) => sent.push(JSON.parse(r.body) as SentBatch));
  analytics.on('http_response', (r) => statuses.push(r.status));
  return { analytics, statuses, sent };
}

test('@segment/analytics-node: identify, track, page, screen, group and alias land as a user and events', async () => {
  const { tracker, token } = await api.addTracker();
  const { analytics, statuses, sent } = segmentClient(token, `http://127.0.0.1:${relay.port}`);
  analytics.identify({ userId: 'u-1', anonymousId: 'anon-1', traits: { email: 'ada@example.com', plan: 'pro', _internal: true } });
  analytics.track({ userId: 'u-1', event: 'Order Completed', properties: { total: 42.5, items: [{ sku: 'a' }] } });
  analytics.page({ anonymousId: 'anon-1', name: 'Pricing', category: 'Docs', properties: { url: 'https://example.com/pricing', path: '/pricing' } });
  analytics.screen({ userId: 'u-1', name: 'Home' });
  analytics.group({ userId: 'u-1', groupId: 'acme', traits: { employees: 12 } });
  analytics.alias({ userId: 'u-1', previousId: 'anon-1' });
  await analytics.closeAndFlush();

  expect(statuses).toEqual([200]);
  const messageIds = sent.flatMap((b) => b.batch.map((m) => m.messageId));
  const records = await storedFor(tracker.id);
  expect(records.map((r) => r.id)).toEqual(messageIds);
  const [user, order, page, screen, group, alias] = records;
  expect(user).toMatchObject({ kind: 'user', uid: 'u-1', properties: { email: 'ada@example.com', plan: 'pro', __internal: true, anonymous_id: 'anon-1' } });
  expect(order).toMatchObject({ kind: 'event', event: 'Order Completed', uid: 'u-1', properties: { total: 42.5, items: [{ sku: 'a' }], context_library_name: '@segment/analytics-node' } });
  expect(page).toMatchObject({ kind: 'event', event: 'page_view', uid: 'anon-1', properties: { name: 'Pricing', category: 'Docs', url: 'https://example.com/pricing', path: '/pricing' } });
  expect(screen).toMatchObject({ event: 'screen_view', properties: { name: 'Home' } });
  expect(group).toMatchObject({ event: 'group', properties: { group_id: 'acme', group_traits: { employees: 12 } } });
  expect(alias).toMatchObject({ event: 'alias', uid: 'u-1', properties: { previous_id: 'anon-1' } });
  for (const r of records) expect(Object.keys(r.properties).some((k) => k === '_metadata' || k === 'writeKey')).toBe(false);
});

test('@segment/analytics-node: a batch answered 503, then one whose answer is lost, is stored once', async () => {
  const { tracker, token } = await api.addTracker();
  const start = hop.seen.length;
  hop.setFaults((n) => (n === start ? 'unavailable' : n === start + 1 ? 'lose-answer' : 'pass'));
  const { analytics, sent } = segmentClient(token, hop.url);
  for (let i = 0; i < 5; i++) analytics.track({ anonymousId: 'anon-2', event: 'Clicked', properties: { i } });
  await analytics.closeAndFlush();
  hop.setFaults(() => 'pass');

  const tries = hop.seen.slice(start);
  expect(tries.map((t) => t.fault)).toEqual(['unavailable', 'lose-answer', 'pass']);
  // Every try carried the write key by Basic auth, and the retries said they were retries.
  expect(tries.every((t) => t.headers.authorization === `Basic ${Buffer.from(`${token}:`).toString('base64')}`)).toBe(true);
  expect(tries.slice(1).map((t) => t.headers['x-retry-count'])).toEqual(['1', '2']);
  const ids = new Set(sent.flatMap((b) => b.batch.map((m) => m.messageId)));
  expect(ids.size).toBe(5);
  const records = await storedFor(tracker.id);
  expect(records.map((r) => r.properties.i)).toEqual([0, 1, 2, 3, 4]);
  expect(new Set(records.map((r) => r.id))).toEqual(ids);
});

test('@rudderstack/rudder-sdk-node: gzip batches by Basic auth, and a 503 retried, stored once', async () => {
  const { tracker, token } = await api.addTracker();
  const start = hop.seen.length;
  hop.setFaults((n) => (n === start ? 'unavailable' : 'pass'));
  const rudder = new RudderAnalytics(token, { dataPlaneUrl: hop.url, flushAt: 20, flushInterval: 50, retryCount: 3, logLevel: 'error' });
  rudder.identify({ userId: 'r-1', anonymousId: 'ra-1', traits: { name: 'Grace' } });
  rudder.track({ userId: 'r-1', event: 'Report Run', properties: { rows: 12 } });
  rudder.page({ anonymousId: 'ra-1', name: 'Dashboard', properties: { url: 'https://example.com/d' } });
  rudder.group({ userId: 'r-1', groupId: 'team-9', traits: { seats: 3 } });
  rudder.alias({ userId: 'r-1', previousId: 'ra-1' });
  await rudder.flush();
  hop.setFaults(() => 'pass');

  const tries = hop.seen.slice(start);
  expect(tries.length).toBeGreaterThanOrEqual(2);
  expect(tries.every((t) => t.path === '/v1/batch' && t.headers['content-encoding'] === 'gzip')).toBe(true);
  const records = await storedFor(tracker.id);
  expect(records.map((r) => [r.kind, r.event ?? null, r.uid])).toEqual([
    ['user', null, 'r-1'],
    ['event', 'Report Run', 'r-1'],
    ['event', 'page_view', 'ra-1'],
    ['event', 'group', 'r-1'],
    ['event', 'alias', 'r-1'],
  ]);
  expect(records[0]!.properties).toMatchObject({ name: 'Grace', anonymous_id: 'ra-1' });
  expect(records[1]!.properties).toMatchObject({ rows: 12, context_library_name: expect.any(String) });
});
