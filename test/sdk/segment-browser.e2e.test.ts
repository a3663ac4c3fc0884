import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { browserSuite, launchChromium, watchProblems } from '../console/browser';
import { startTestApi, type TestApi } from '../helpers/api';
import { waitFor } from '../helpers/wait';
import { bundleAnalyticsNext, startRelayFront, type RelayFront } from './analytics-next';
import { html, startSite, type Site } from './site';

/**
 * Segment's own browser SDK, `@segment/analytics-next` 1.84.3 as an application bundles it, in a
 * real headless Chromium against the relay's `/v1`. The page is served from `http://localhost:…`
 * and the relay listens on `http://127.0.0.1:…`: every send is a CORS request, and, as the SDK
 * adds `Authorization` (and `X-Retry-Count` on retries), a preflighted one. Records are checked in
 * the queue, as the relay hands them on.
 */

type Row = Record<string, unknown>;
type Queued = Awaited<ReturnType<TestApi['queuedRecords']>>[number];

/** One POST the page made to the relay's `/v1`, as the page saw it. */
interface Send {
  path: string;
  ids: string[];
  /** The body's own fields: a batch's root, or the one message's. */
  fields: string[];
  status?: number;
  answer?: Row;
  failed?: string;
}

browserSuite('segment browser e2e')('@segment/analytics-next in Chromium', () => {
  jest.setTimeout(60_000);

  let dir: string;
  let api: TestApi;
  let front: RelayFront;
  let site: Site;
  let bundle: string;
  let browser: Browser | undefined;
  /** The site as the browser reaches it: another host than the relay's, so another origin. */
  let pageOrigin: string;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tributary-ajs-'));
    [api, site, bundle, browser] = await Promise.all([startTestApi(), startSite(), bundleAnalyticsNext(dir), launchChromium()]);
    front = await startRelayFront(api.runtime.app);
    pageOrigin = site.origin.replace('127.0.0.1', 'localhost');
  });

  afterAll(async () => {
    await browser?.close();
    await front?.close();
    await site?.close();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    for (const c of contexts.splice(0)) await c.close();
    front.setFaults(() => 'pass');
    // The browser logs the requests the front failed on purpose; the page itself must never see an error.
    expect(problems.splice(0).filter((p) => !/Failed to load resource: net::ERR_/.test(p))).toEqual([]);
  });

  /** A page that loads the SDK with `options`, from the relay's settings (`cdnURL`). */
  function sdkPage(route: string, title: string, writeKey: string, options: Row = {}): void {
    const settings = { writeKey, cdnURL: front.origin };
    const load = `window.ajs = AnalyticsBrowser.load(${JSON.stringify(settings)}, ${JSON.stringify(options)});
ajs.then(() => { window.ajsReady = 'loaded'; }, (err) => { window.ajsReady = 'failed: ' + err; });`;
    site.page(route, html(title, `<script>${load}</script>`));
  }

  /** The Segment.io options that name the relay in the init options too, with `more`. */
  const segmentio = (more: Row = {}): Row => ({ integrations: { 'Segment.io': { apiHost: `${new URL(front.origin).host}/v1`, protocol: 'http', ...more } } });

  /** The POSTs the page makes to the relay's `/v1`, with the messageIds they carry and the answers. */
  function watchSends(page: Page): Send[] {
    const sends: Send[] = [];
    const byRequest = new Map<Request, Send>();
    page.on('request', (req) => {
      if (req.method() !== 'POST' || !req.url().startsWith(`${front.origin}/v1/`)) return;
      const body = JSON.parse(req.postData() ?? '{}') as Row;
      const messages = (Array.isArray(body.batch) ? body.batch : [body]) as Row[];
      const send: Send = { path: new URL(req.url()).pathname, ids: messages.map((m) => String(m.messageId)), fields: Object.keys(body).sort() };
      sends.push(send);
      byRequest.set(req, send);
    });
    page.on('response', async (res) => {
      const send = byRequest.get(res.request());
      if (!send) return;
      const answer = (await res.json().catch(() => ({}))) as Row;
      send.status = res.status();
      send.answer = answer;
    });
    page.on('requestfailed', (req) => {
      const send = byRequest.get(req);
      if (send) send.failed = req.failure()?.errorText ?? 'failed';
    });
    return sends;
  }

  /** A fresh browser profile with the SDK's bundle, on `route`, once `load()` settled. */
  async function open(route: string): Promise<{ page: Page; sends: Send[]; urls: string[] }> {
    const context = await browser!.newContext();
    contexts.push(context);
    await context.addInitScript({ path: bundle });
    const page = await context.newPage();
    watchProblems(page, problems);
    const urls: string[] = [];
    page.on('request', (req) => urls.push(req.url()));
    const sends = watchSends(page);
    await page.goto(`${pageOrigin}${route}`);
    await loaded(page);
    return { page, sends, urls };
  }

  async function loaded(page: Page): Promise<void> {
    expect(await (await page.waitForFunction('window.ajsReady')).jsonValue()).toBe('loaded');
  }

  /** Waits until the page has heard every answer to its sends. */
  const answered = (sends: Send[]) => waitFor(() => sends.every((s) => s.answer !== undefined || s.failed !== undefined), { message: 'every send answered' });

  /** Runs an SDK call in the page and gives its messageId once the SDK is done with it. */
  const call = (page: Page, js: string): Promise<string> => page.evaluate(`${js}.then((ctx) => ctx.event.messageId)`) as Promise<string>;
  const anonymousIdOf = (page: Page): Promise<string> => page.evaluate(`ajs.user().then((u) => u.anonymousId())`) as Promise<string>;

  const recordsOf = async (trackerId: string): Promise<Queued[]> => (await api.queuedRecords()).filter((r) => r.trackerId === trackerId);
  function waitRecords(trackerId: string, done: (records: Queued[]) => boolean, message: string): Promise<Queued[]> {
    return waitFor(async () => {
      const records = await recordsOf(trackerId);
      return done(records) ? records : undefined;
    }, { timeoutMs: 15_000, intervalMs: 100, message });
  }

  const header = (value: string | string[] | number | undefined): string[] =>
    String(value ?? '')
      .toLowerCase()
      .split(',')
      .map((h) => h.trim());

  test('a preflight of a send allows what analytics-next sends: Authorization, Content-Type and X-Retry-Count', async () => {
    const res = await fetch(`${front.origin}/v1/t`, {
      method: 'OPTIONS',
      headers: { Origin: pageOrigin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type,x-retry-count' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(pageOrigin);
    expect(header(res.headers.get('access-control-allow-methods') ?? '')).toContain('post');
    expect(header(res.headers.get('access-control-allow-headers') ?? '')).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-retry-count']));
  });

  test('with only a write key and cdnURL, the relay’s settings send each call to its /v1 path, mapped onto users and events', async () => {
    const { tracker, token } = await api.addTracker();
    sdkPage('/landing', 'Landing', token);
    const start = front.seen.length;
    const { page, sends, urls } = await open('/landing?utm_source=newsletter');
    const seen = front.seen.slice(start);
    const settings = seen.find((r) => r.method === 'GET' && r.path === `/v1/projects/${token}/settings`);
    expect(settings).toMatchObject({ status: 200, headers: { origin: pageOrigin } });

    const anonymous = await anonymousIdOf(page);
    const ids = {
      view: await call(page, `ajs.page('Docs', 'Pricing', { plan: 'pro' })`),
      signup: await call(page, `ajs.track('signup', { plan: 'pro', seats: 3 })`),
      // Before identify: once a user is identified, analytics-next sends every message, an
      // alias's too, with that user's id as userId (EventFactory's addIdentity).
      alias: await call(page, `ajs.alias('user-42')`),
      user: await call(page, `ajs.identify('user-42', { email: 'ada@example.com', _internal: 1 })`),
      order: await call(page, `ajs.track('order', { total: 42.5 })`),
      group: await call(page, `ajs.group('acme', { name: 'Acme' })`),
    };
    await answered(sends);
    expect(sends.map((s) => [s.path, s.ids, s.status])).toEqual([
      ['/v1/p', [ids.view], 200],
      ['/v1/t', [ids.signup], 200],
      ['/v1/a', [ids.alias], 200],
      ['/v1/i', [ids.user], 200],
      ['/v1/t', [ids.order], 200],
      ['/v1/g', [ids.group], 200],
    ]);
    expect(sends.every((s) => s.answer?.success === true && s.answer.accepted === 1)).toBe(true);
    // Every send was preflighted: Authorization is not a safelisted header.
    const preflights = front.seen.slice(start).filter((r) => r.method === 'OPTIONS');
    expect(preflights.map((r) => [r.path, r.headers['access-control-request-headers'], r.status])).toEqual(sends.map((s) => [s.path, 'authorization', 204]));
    // The sends carry the write key the settings gave; nothing is fetched from Segment's CDN or API.
    expect(front.seen.slice(start).filter((r) => r.method === 'POST').every((r) => r.headers.authorization === `Basic ${Buffer.from(`${token}:`).toString('base64')}`)).toBe(true);
    expect(urls.filter((u) => !u.startsWith(`${pageOrigin}/`) && !u.startsWith(`${front.origin}/`))).toEqual([]);

    const records = await waitRecords(tracker.id, (r) => r.length === 6, 'six records');
    const byId = new Map(records.map((r) => [r.id, r]));
    expect(byId.get(ids.view)).toMatchObject({
      kind: 'event',
      event: 'page_view',
      uid: anonymous,
      properties: { url: `${pageOrigin}/landing?utm_source=newsletter`, path: '/landing', title: 'Landing', search: '?utm_source=newsletter', name: 'Pricing', category: 'Docs', plan: 'pro', context_library_name: 'analytics.js', context_campaign_source: 'newsletter' },
    });
    expect(byId.get(ids.signup)).toMatchObject({ kind: 'event', event: 'signup', uid: anonymous, properties: { plan: 'pro', seats: 3 } });
    expect(byId.get(ids.signup)!.properties.anonymous_id).toBeUndefined();
    expect(byId.get(ids.user)).toMatchObject({ kind: 'user', uid: 'user-42', properties: { email: 'ada@example.com', __internal: 1, anonymous_id: anonymous } });
    expect(byId.get(ids.order)).toMatchObject({ kind: 'event', event: 'order', uid: 'user-42', properties: { total: 42.5, anonymous_id: anonymous } });
    expect(byId.get(ids.group)).toMatchObject({ kind: 'event', event: 'group', uid: 'user-42', properties: { group_id: 'acme', group_traits: { name: 'Acme' } } });
    expect(byId.get(ids.alias)).toMatchObject({ kind: 'event', event: 'alias', uid: 'user-42', properties: { previous_id: anonymous, anonymous_id: anonymous } });
    for (const r of records.filter((x) => x.kind === 'event')) expect(Date.parse(r.eventAt!)).toBeLessThanOrEqual(Date.parse(r.receivedAt));
  });

  test('batching delivery posts {batch, sentAt, writeKey} to /v1/b, a batch when full and the rest on its timeout', async () => {
    const { tracker, token } = await api.addTracker();
    sdkPage('/batching', 'Batching', token, segmentio({ deliveryStrategy: { strategy: 'batching', config: { size: 3, timeout: 1000 } } }));
    const { page, sends } = await open('/batching');
    // The page view first: the SDK reads the user's ids as a message leaves its queue, so a page
    // view still in it when identify() runs would go out with the new userId.
    const view = await call(page, 'ajs.page()');
    const rest = (await page.evaluate(`Promise.all([ajs.identify('user-7', { plan: 'team' }), ajs.track('a', { n: 1 }), ajs.track('b', { n: 2 })]).then((ctxs) => ctxs.map((ctx) => ctx.event.messageId))`)) as string[];
    const ids = [view, ...rest];
    await waitFor(() => sends.filter((s) => s.answer !== undefined).length === 2, { message: 'two batches answered' });
    expect(sends.map((s) => [s.path, s.ids.length, s.status])).toEqual([
      ['/v1/b', 3, 200],
      ['/v1/b', 1, 200],
    ]);
    expect(sends[0]!.ids[0]).toBe(view);
    expect(sends.flatMap((s) => s.ids).sort()).toEqual([...ids].sort());
    expect(sends.every((s) => s.fields.join() === 'batch,sentAt,writeKey')).toBe(true);
    expect(sends.map((s) => s.answer)).toEqual([
      { success: true, accepted: 3, rejected: 0 },
      { success: true, accepted: 1, rejected: 0 },
    ]);
    const records = await waitRecords(tracker.id, (r) => r.length === 4, 'four records');
    // By id: the user and the events of one request may be queued in either order.
    const byId = new Map(records.map((r) => [r.id, r]));
    expect(ids.map((id) => byId.get(id)).map((r) => [r?.kind, r?.event, r?.uid])).toEqual([
      ['event', 'page_view', await anonymousIdOf(page)],
      ['user', undefined, 'user-7'],
      ['event', 'a', 'user-7'],
      ['event', 'b', 'user-7'],
    ]);
  });

  /** The requests to `path`, preflights included, that reached the front since its `from`-th. */
  const frontTraffic = (path: string, from: number) => front.seen.slice(from).filter((r) => r.path === path);

  test('standard delivery: a send answered 503 is retried with X-Retry-Count, preflighted again, and stored once', async () => {
    const { tracker, token } = await api.addTracker();
    sdkPage('/retry', 'Retry', token, segmentio());
    const { page, sends } = await open('/retry');
    const from = front.seen.length;
    let posts = 0;
    front.setFaults((method, p) => (method === 'POST' && p === '/v1/t' && posts++ === 0 ? 'unavailable' : 'pass'));
    const id = await call(page, `ajs.track('checkout', { total: 10 })`);
    await waitFor(() => sends.some((s) => s.answer !== undefined && s.status === 200), { message: 'the retry answered' });
    expect(sends.map((s) => [s.path, s.ids, s.status])).toEqual([
      ['/v1/t', [id], 503],
      ['/v1/t', [id], 200],
    ]);
    expect(sends[1]!.answer).toEqual({ success: true, accepted: 1, id });
    // The retry's own preflight lists X-Retry-Count, and the relay allows it.
    expect(frontTraffic('/v1/t', from).map((r) => [r.method, r.headers['access-control-request-headers'] ?? r.headers['x-retry-count'], r.status])).toEqual([
      ['OPTIONS', 'authorization', 204],
      ['POST', undefined, 503],
      ['OPTIONS', 'authorization,x-retry-count', 204],
      ['POST', '1', 200],
    ]);
    expect(header(frontTraffic('/v1/t', from)[2]!.answer['access-control-allow-headers'])).toContain('x-retry-count');
    const records = await waitRecords(tracker.id, (r) => r.some((x) => x.id === id), 'the retried event');
    expect(records.filter((r) => r.id === id)).toHaveLength(1);
  });

  test('batching delivery: a batch answered 503 is retried with X-Retry-Count after the configured backoff, and stored once', async () => {
    const { tracker, token } = await api.addTracker();
    const fast = { backoffConfig: { baseBackoffInterval: 0.1, jitterPercent: 0 } };
    // Sent on the timeout, not on size: a batch sent because it was full and then failed waits for
    // the timeout's flush already scheduled, not for its backoff (batched-dispatcher.ts, scheduleFlush).
    sdkPage('/batch-retry', 'Batch retry', token, segmentio({ deliveryStrategy: { strategy: 'batching', config: { size: 10, timeout: 500 } }, httpConfig: fast }));
    const { page, sends } = await open('/batch-retry');
    const from = front.seen.length;
    let posts = 0;
    front.setFaults((method, p) => (method === 'POST' && p === '/v1/b' && posts++ === 0 ? 'unavailable' : 'pass'));
    const ids = (await page.evaluate(`Promise.all([ajs.track('x'), ajs.track('y')]).then((ctxs) => ctxs.map((ctx) => ctx.event.messageId))`)) as string[];
    await waitFor(() => sends.some((s) => s.answer !== undefined && s.status === 200), { message: 'the retry answered' });
    expect(sends.map((s) => [s.ids, s.status])).toEqual([
      [ids, 503],
      [ids, 200],
    ]);
    expect(frontTraffic('/v1/b', from).filter((r) => r.method === 'POST').map((r) => [r.headers['x-retry-count'], r.status])).toEqual([
      [undefined, 503],
      ['1', 200],
    ]);
    const records = await waitRecords(tracker.id, (r) => r.length === 2, 'both events');
    expect(records.map((r) => r.id).sort()).toEqual([...ids].sort());
  });

  test('a reload keeps the anonymous id, and an event kept in localStorage while the relay was unreachable arrives once after it', async () => {
    const { tracker, token } = await api.addTracker();
    sdkPage('/reload', 'Reload', token, segmentio());
    const start = front.seen.length;
    const { page, sends } = await open('/reload');
    const anonymous = await anonymousIdOf(page);
    const firstView = await call(page, 'ajs.page()');

    front.setFaults((_method, p) => (p === '/v1/t' ? 'refuse' : 'pass'));
    const kept = await call(page, `ajs.track('kept', { n: 1 })`);
    await waitFor(() => sends.some((s) => s.ids.includes(kept) && s.failed !== undefined), { message: 'a failed attempt' });
    // What the old page left in localStorage, read by the new one before the SDK takes it back.
    await page.addInitScript(`window.keptAtLoad = localStorage.getItem('persisted-queue:v1:${token}:dest-Segment.io:items')`);
    // Unreachable until the old document is gone (the reload committed): every attempt the old
    // page makes fails, so only its localStorage can bring the event over.
    await page.reload({ waitUntil: 'commit' });
    const from = front.seen.length;
    front.setFaults(() => 'pass');
    await loaded(page);
    expect(await page.evaluate('window.keptAtLoad')).toContain(kept);
    expect(await anonymousIdOf(page)).toBe(anonymous);
    const secondView = await call(page, 'ajs.page()');

    const records = await waitRecords(tracker.id, (r) => r.some((x) => x.id === kept) && r.some((x) => x.id === secondView), 'the kept event and the second page view');
    await answered(sends);
    expect(records.map((r) => [r.id, r.event, r.uid])).toEqual(
      expect.arrayContaining([
        [firstView, 'page_view', anonymous],
        [kept, 'kept', anonymous],
        [secondView, 'page_view', anonymous],
      ]),
    );
    expect(records).toHaveLength(3);
    expect(sends.filter((s) => s.ids.includes(kept) && s.status !== undefined).map((s) => [s.status, s.answer?.accepted])).toEqual([[200, 1]]);
    // Sent once, by the reloaded page: every track before the commit was refused.
    const tracks = front.seen.slice(start).filter((r) => r.method === 'POST' && r.path === '/v1/t' && r.fault === 'pass');
    expect(tracks.map((r) => r.status)).toEqual([200]);
    expect(front.seen.indexOf(tracks[0]!)).toBeGreaterThanOrEqual(from);
    expect(Number(tracks[0]!.headers['x-retry-count'])).toBeGreaterThanOrEqual(1);
  });
  test("a site's snippet with its host changed: analytics.js, its chunks, its settings and its sends all come from the relay", async () => {
    const { tracker, token } = await api.addTracker();
    // What Segment's snippet does, written out: a queue of calls on window.analytics, then the
    // script from the CDN's path (here the relay's). _cdn: the relay is http:// here, and
    // analytics.js reads its CDN from a script address only when it is https://.
    const snippet = `(() => {
      const a = (window.analytics = []);
      for (const m of ['page', 'track', 'identify', 'ready']) a[m] = (...args) => { a.push([m, ...args]); return a; };
      a._writeKey = ${JSON.stringify(token)};
      a._cdn = ${JSON.stringify(front.origin)};
      a.load = (key, options) => {
        const t = document.createElement('script');
        t.async = true;
        t.src = ${JSON.stringify(`${front.origin}/analytics.js/v1/`)} + key + '/analytics.min.js';
        document.head.appendChild(t);
        a._loadOptions = options;
      };
      a.load(${JSON.stringify(token)});
      a.page();
      a.track('snippet signup', { plan: 'team' });
      a.ready(() => { window.ajsReady = 'loaded'; });
    })();`;
    site.page('/snippet', html('Snippet', `<script>${snippet}</script>`));
    const context = await browser!.newContext();
    contexts.push(context);
    const page = await context.newPage();
    watchProblems(page, problems);
    const urls: string[] = [];
    page.on('request', (req) => urls.push(req.url()));
    // ajs_event in the address: analytics.js tracks it, with a chunk it loads for query strings.
    await page.goto(`${pageOrigin}/snippet?ajs_event=from_link`);
    await loaded(page);

    const records = await waitRecords(tracker.id, (r) => r.length === 3, 'the page view, the track and the link event');
    expect(records.map((r) => [r.kind, r.event])).toEqual(expect.arrayContaining([['event', 'page_view'], ['event', 'snippet signup'], ['event', 'from_link']]));
    expect(urls.some((u) => u.startsWith(`${front.origin}/analytics-next/bundles/queryString.bundle.`))).toBe(true);
    expect(records.find((r) => r.event === 'snippet signup')!.properties).toMatchObject({ plan: 'team', context_library_name: 'analytics.js', context_page_path: '/snippet' });
    expect(urls).toContain(`${front.origin}/analytics.js/v1/${token}/analytics.min.js`);
    expect(urls).toContain(`${front.origin}/v1/projects/${token}/settings`);
    expect(urls.filter((u) => !u.startsWith(`${pageOrigin}/`) && !u.startsWith(`${front.origin}/`))).toEqual([]);
  });
});
