import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Analytics } from '@segment/analytics-node';
import { localConnector, queryWarehouse } from '../../connectors/local';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { startTestApi, type TestApi } from '../helpers/api';
import { listen, type Listening } from '../helpers/raw-http';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

/**
 * Segment's Node library, pointed at the relay by its host alone, into the local warehouse through
 * the queue and a worker: users upserted with their traits, sessions from the session plugin's id,
 * events with the context as `context_*` columns.
 */
jest.setTimeout(120_000);
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-segment-'));
let api: TestApi;
let relay: Listening;
let worker: WorkerRuntime;

beforeAll(async () => {
  api = await startTestApi({ DATA_DIR: dataDir }, { destinations: [{ id: 'wh', type: 'local', enabled: true, settings: {} }] });
  relay = await listen(api.runtime.app);
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([localConnector as Connector]), createLogger('silent'), { discoverIntervalMs: 50, delivery: { backoff: { baseMs: 50, maxMs: 200 }, maxRecordAttempts: 10, configRecheckMs: 200, pollMs: 100, writeTimeoutMs: 30_000 } });
});
afterAll(async () => {
  await worker.close();
  await relay.close();
  await api.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function query(sql: string, count: number): Promise<unknown[][]> {
  const file = path.join(dataDir, 'warehouse', `${api.tracker.id}.duckdb`);
  return waitFor(
    async () => {
      try {
        const r = await queryWarehouse(file, sql);
        return r.rows.length >= count ? r.rows : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 60_000, intervalMs: 250, message: `${count} rows of ${sql}` },
  );
}

test('identify, page and track from @segment/analytics-node land as a user, a session and events', async () => {
  const analytics = new Analytics({ writeKey: api.token, host: `http://127.0.0.1:${relay.port}`, flushAt: 50, flushInterval: 50 });
  const session = { integrations: { 'Actions Amplitude': { session_id: 1_795_000_000_000 } } };
  const context = { page: { url: 'https://shop.example/?utm_source=news', referrer: 'https://news.example/' }, campaign: { name: 'spring', source: 'news', medium: 'email' }, locale: 'fr-FR' };
  analytics.page({ anonymousId: 'anon-9', name: 'Home', properties: { url: 'https://shop.example/', path: '/' }, context, ...session });
  analytics.identify({ userId: 'user-9', anonymousId: 'anon-9', traits: { email: 'ada@example.com', plan: 'free' }, context, ...session });
  analytics.track({ userId: 'user-9', anonymousId: 'anon-9', event: 'Order Completed', properties: { total: 12.5 }, context, ...session });
  analytics.identify({ userId: 'user-9', traits: { plan: 'pro' } });
  await analytics.closeAndFlush();

  const events = await query("select _event, _uid, _sid, context_campaign_source, context_page_url, context_library_name from events order by _uid, _event", 2);
  expect(events).toEqual([
    ['page_view', 'anon-9', 'anon-9:1795000000000', 'news', 'https://shop.example/?utm_source=news', '@segment/analytics-node'],
    ['Order Completed', 'user-9', 'anon-9:1795000000000', 'news', 'https://shop.example/?utm_source=news', '@segment/analytics-node'],
  ]);
  // The traits merge: the later identify changed the plan and kept the email.
  expect(await query('select _uid, email, plan, anonymous_id from users', 1)).toEqual([['user-9', 'ada@example.com', 'pro', 'anon-9']]);
  // The session from its first message (the page), then given to the user.
  expect(await query('select _sid, _uid, landing_page, referrer, utm_source, utm_medium, utm_campaign, language from sessions', 1)).toEqual([
    ['anon-9:1795000000000', 'user-9', 'https://shop.example/?utm_source=news', 'https://news.example/', 'news', 'email', 'spring', 'fr-FR'],
  ]);
});
