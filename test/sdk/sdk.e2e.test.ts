import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { browserSuite, consoleServer, launchChromium, watchProblems } from '../console/browser';
import { waitFor } from '../helpers/wait';
import { html, startSite, type Site } from './site';

/**
 * The browser SDK in a real headless Chromium, on a site whose origin is not the relay's: the
 * snippet as the integration view prints it, records checked where a user looks for them (the local
 * warehouse, through the admin API's query).
 */

const ADMIN_TOKEN = 'sdk-e2e-admin-token-0123456789abcdef';
type Row = Record<string, unknown>;

browserSuite('sdk e2e')('the browser SDK', () => {
  jest.setTimeout(120_000);

  const server = consoleServer('sdk-e2e', ADMIN_TOKEN);
  const { adminFetch } = server;
  let site: Site;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];
  let trackers = 0;

  /** A tracker delivering to the local warehouse, and its snippet as `trackers show` prints it. */
  async function newTracker(): Promise<{ id: string; snippet: string; pinned: string; token: string }> {
    const id = `site${++trackers}`;
    expect((await adminFetch('/trackers', { method: 'POST', body: JSON.stringify({ id, name: id }) })).status).toBe(201);
    expect((await adminFetch(`/trackers/${id}/destinations`, { method: 'POST', body: JSON.stringify({ type: 'local' }) })).status).toBe(201);
    const view = (await (await adminFetch(`/trackers/${id}/integration`)).json()) as { sdkSnippet: string; sdkPinnedSnippet: string; token: string };
    return { id, snippet: view.sdkSnippet, pinned: view.sdkPinnedSnippet, token: view.token };
  }

  async function query(tracker: string, sql: string): Promise<Row[]> {
    const res = await adminFetch(`/trackers/${tracker}/query`, { method: 'POST', body: JSON.stringify({ sql }) });
    if (res.status !== 200) return [];
    const { columns, rows } = (await res.json()) as { columns: string[]; rows: unknown[][] };
    return rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i]])));
  }

  /** Waits until `sql` answers rows that pass `done`. */
  function rowsWhen(tracker: string, sql: string, done: (rows: Row[]) => boolean, message: string): Promise<Row[]> {
    return waitFor(async () => {
      const rows = await query(tracker, sql);
      return done(rows) ? rows : undefined;
    }, { timeoutMs: 30_000, intervalMs: 300, message });
  }

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser!.newContext();
    contexts.push(context);
    const page = await context.newPage();
    watchProblems(page, problems);
    return { context, page };
  }

  beforeAll(async () => {
    await server.start();
    site = await startSite();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await server.stop();
  });

  afterEach(async () => {
    for (const c of contexts.splice(0)) await c.close();
    // The browser logs the requests it could not make (offline, refused, reset); the page itself must never see an error.
    expect(problems.splice(0).filter((p) => !/Failed to load resource: net::ERR_/.test(p))).toEqual([]);
  });

  test('the snippet records a page view and a session; track and identify arrive with the ids; a marked click is an event', async () => {
    const t = await newTracker();
    expect(t.snippet).toContain(`src="${server.base}/sdk.js" data-token="${t.token}"`);
    // Calls made before the script loaded are queued by the snippet's stub.
    site.page(
      '/landing',
      html(
        'Landing',
        t.snippet,
        `<button data-track="cta_click" data-track-plan="pro">Buy</button>
<script>tributary.track('signup', { plan: 'pro', seats: 3 }); tributary.identify('user-42', { email: 'ada@example.com' }); tributary.track('order', { total: 42.5 });</script>`,
      ),
    );
    const { page } = await newPage();
    await page.goto(`${site.origin}/landing?utm_source=newsletter&utm_campaign=launch`);
    await page.getByRole('button', { name: 'Buy' }).click();
    expect(await page.evaluate('document.cookie')).toBe(''); // no cookies unless the site asks

    const events = await rowsWhen(t.id, `select _event, _uid, _sid, url, path, title, utm_source, utm_campaign, plan, seats, total from events order by _event`, (r) => r.length === 4, 'four events');
    const byName = Object.fromEntries(events.map((e) => [e._event, e]));
    expect(Object.keys(byName).sort()).toEqual(['cta_click', 'order', 'page_view', 'signup']);
    const view = byName.page_view!;
    expect(view).toMatchObject({ url: `${site.origin}/landing?utm_source=newsletter&utm_campaign=launch`, path: '/landing', title: 'Landing', utm_source: 'newsletter', utm_campaign: 'launch' });
    const anonymous = byName.signup!._uid as string;
    expect(anonymous).toMatch(/^[0-9a-f-]{36}$/);
    expect(byName.signup).toMatchObject({ plan: 'pro', seats: '3' }); // BIGINT: 64-bit integers come back as text
    expect(byName.order).toMatchObject({ _uid: 'user-42', total: 42.5 });
    expect(byName.cta_click).toMatchObject({ _uid: 'user-42', plan: 'pro' });
    expect(new Set(events.map((e) => e._sid)).size).toBe(1);

    const [session] = await rowsWhen(t.id, 'select _sid, _uid, landing_page, referrer, utm_source, language, screen from sessions', (r) => r.length === 1 && r[0]!._uid === 'user-42', 'the session, then its user');
    expect(session).toMatchObject({ _sid: view._sid, landing_page: view.url, utm_source: 'newsletter', language: 'en-US' });
    expect(session!.screen).toMatch(/^\d+x\d+$/);
    const [user] = await rowsWhen(t.id, 'select _uid, email, anonymous_id from users', (r) => r.length === 1, 'the user');
    expect(user).toEqual({ _uid: 'user-42', email: 'ada@example.com', anonymous_id: anonymous });
  });

  /** Requests the page sent to the relay's `/v3/…`, with their bodies' records. */
  function relayRequests(page: Page): Array<{ path: string; records: Row[]; beacon: boolean }> {
    const seen: Array<{ path: string; records: Row[]; beacon: boolean }> = [];
    page.on('request', (req: Request) => {
      const url = new URL(req.url());
      if (!req.url().startsWith(server.base) || !url.pathname.startsWith('/v3/')) return;
      if (process.env.SDK_E2E_DEBUG) console.log(req.resourceType(), req.method(), req.url());
      seen.push({ path: url.pathname, records: JSON.parse(req.postData() ?? '[]') as Row[], beacon: req.resourceType() === 'ping' });
    });
    return seen;
  }

  const count = async (tracker: string, where: string) => Number((await query(tracker, `select count(*)::int as n from events where ${where}`))[0]?.n ?? 0);

  test('events tracked offline arrive once after going back online', async () => {
    const t = await newTracker();
    site.page('/offline', html('Offline', t.snippet));
    const { context, page } = await newPage();
    const sent = relayRequests(page);
    await page.goto(`${site.origin}/offline`);
    await rowsWhen(t.id, `select _id from events where _event = 'page_view'`, (r) => r.length === 1, 'the page view');
    await context.setOffline(true);
    await page.evaluate(`tributary.track('offline_order', { total: 7 })`);
    await waitFor(async () => sent.some((r) => r.records.some((x) => x._event === 'offline_order')), { message: 'a first attempt, offline' });
    await new Promise((r) => setTimeout(r, 1500));
    expect(await count(t.id, `_event = 'offline_order'`)).toBe(0);
    await context.setOffline(false);
    await rowsWhen(t.id, `select _id from events where _event = 'offline_order'`, (r) => r.length === 1, 'the offline event');
    await page.evaluate(`tributary.flush()`);
    expect(await count(t.id, `_event = 'offline_order'`)).toBe(1);
  });

  test('records kept while the relay cannot be reached survive a reload and arrive once', async () => {
    const t = await newTracker();
    site.page('/down', html('Down', t.snippet));
    const { page } = await newPage();
    await page.route(`${server.base}/v3/**`, (route) => route.abort('connectionrefused'));
    await page.goto(`${site.origin}/down`);
    await page.evaluate(`tributary.track('kept', { n: 1 })`);
    await page.reload();
    await page.unroute(`${server.base}/v3/**`);
    await page.evaluate(`tributary.flush()`);
    const rows = await rowsWhen(t.id, `select _event from events order by _event`, (r) => r.length === 3, 'two page views and the kept event');
    expect(rows.map((r) => r._event)).toEqual(['kept', 'page_view', 'page_view']);
  });

  test('a batch whose answer is lost after the relay stored it is sent again and stored once', async () => {
    const t = await newTracker();
    site.page('/lost', html('Lost', t.snippet));
    const { page } = await newPage();
    let lost = 0;
    const answers: string[] = [];
    await page.route(`${server.base}/v3/event**`, async (route) => {
      const records = JSON.parse(route.request().postData() ?? '[]') as Row[];
      const response = await route.fetch();
      const text = await response.text();
      if (records.some((r) => r._event === 'paid') && lost++ === 0) return route.abort('connectionreset'); // stored, but the page never hears it
      if (records.some((r) => r._event === 'paid')) answers.push(text);
      return route.fulfill({ response, body: text });
    });
    await page.goto(`${site.origin}/lost`);
    await page.evaluate(`tributary.track('paid', { order: 'A-1' })`);
    await waitFor(async () => answers.length > 0, { message: 'the retry answered' });
    const answer = JSON.parse(answers[0]!) as { accepted: number; results: Array<{ duplicate?: boolean }> };
    expect(answer.accepted).toBe(0);
    expect(answer.results.length).toBeGreaterThan(0);
    expect(answer.results.every((r) => r.duplicate === true)).toBe(true);
    await rowsWhen(t.id, `select _id from events where _event = 'paid'`, (r) => r.length === 1, 'the paid event');
    expect(await count(t.id, `_event = 'paid'`)).toBe(1);
  });

  test('an event tracked right before navigating away arrives (by sendBeacon)', async () => {
    const t = await newTracker();
    site.page('/from', html('From', t.snippet, '<a href="/to">Next</a>'));
    site.page('/to', html('To', '')); // no SDK there: only the beacon can bring it
    const { page } = await newPage();
    const sent = relayRequests(page);
    await page.goto(`${site.origin}/from`);
    await rowsWhen(t.id, `select _id from events`, (r) => r.length === 1, 'the page view');
    await page.evaluate(`tributary.track('outbound', { to: '/to' })`);
    await page.getByRole('link', { name: 'Next' }).click();
    await page.waitForURL(`${site.origin}/to`);
    await rowsWhen(t.id, `select _id from events where _event = 'outbound'`, (r) => r.length === 1, 'the event sent on leaving');
    // Not by the page's own batching: its second was not up when the page went (Playwright does not report the beacon itself).
    expect(sent.some((r) => r.records.some((x) => x._event === 'outbound'))).toBe(false);
  });

  test('a single-page-app navigation records a page view with the new path, title and referrer', async () => {
    const t = await newTracker();
    site.page('/app', html('Home', t.snippet, `<button onclick="history.pushState({}, '', '/app/pricing'); document.title = 'Pricing'">Pricing</button>`));
    const { page } = await newPage();
    await page.goto(`${site.origin}/app`);
    await page.getByRole('button', { name: 'Pricing' }).click();
    const views = await rowsWhen(t.id, `select path, title, referrer, _sid from events where _event = 'page_view' order by _event_at`, (r) => r.length === 2, 'two page views');
    expect(views[1]).toMatchObject({ path: '/app/pricing', title: 'Pricing', referrer: `${site.origin}/app` });
    expect(views[1]!._sid).toBe(views[0]!._sid);
    await page.goBack();
    await rowsWhen(t.id, `select path from events where _event = 'page_view' order by _event_at`, (r) => r.length === 3 && r[2]!.path === '/app', 'a page view on going back');
  });

  test('two tabs of one site share the visitor and the session', async () => {
    const t = await newTracker();
    site.page('/tab', html('Tab', t.snippet));
    const { context, page } = await newPage();
    await page.goto(`${site.origin}/tab`);
    const second = await context.newPage();
    watchProblems(second, problems);
    await second.goto(`${site.origin}/tab?second=1`);
    const views = await rowsWhen(t.id, `select _uid, _sid from events where _event = 'page_view'`, (r) => r.length === 2, 'a page view per tab');
    expect(views[0]).toEqual(views[1]);
    expect((await query(t.id, 'select count(*)::int as n from sessions'))[0]?.n).toBe(1);
  });

  test('opting out persists and sends nothing; in consent mode nothing is sent before optIn', async () => {
    const t = await newTracker();
    site.page('/optout', html('Opt out', t.snippet));
    site.page('/consent', html('Consent', t.snippet.replace('<script async ', '<script async data-consent="required" ')));
    const { page } = await newPage();
    const sent = relayRequests(page);
    await page.goto(`${site.origin}/optout`);
    await page.evaluate(`tributary.optOut()`);
    await page.reload();
    await page.evaluate(`tributary.track('after_opt_out')`);
    await page.goto(`${site.origin}/consent`);
    await page.evaluate(`tributary.optIn()`); // the same site: consent also lifts the opt-out
    const before = sent.length;

    const { page: fresh } = await newPage();
    const freshSent = relayRequests(fresh);
    await fresh.goto(`${site.origin}/consent`);
    await fresh.evaluate(`tributary.track('before_consent')`);
    await new Promise((r) => setTimeout(r, 2000));
    expect(freshSent).toEqual([]);
    await fresh.evaluate(`tributary.optIn()`);
    await rowsWhen(t.id, `select _event from events where _event = 'before_consent'`, (r) => r.length === 1, 'the event recorded before consent, sent after it');
    expect(sent.slice(0, before).flatMap((r) => r.records).some((x) => x._event === 'after_opt_out')).toBe(false);
  });

  test('429 and 5xx are retried no sooner than Retry-After; bad arguments never throw into the page', async () => {
    const t = await newTracker();
    site.page('/busy', html('Busy', t.snippet));
    const { page } = await newPage();
    const attempts: number[] = [];
    await page.route(`${server.base}/v3/event**`, async (route) => {
      attempts.push(Date.now());
      // The relay's own 503, CORS headers included (it exposes Retry-After to pages).
      const cors = { 'Access-Control-Allow-Origin': site.origin, 'Access-Control-Allow-Credentials': 'true', 'Access-Control-Expose-Headers': 'X-Tributary-Error,Retry-After' };
      if (attempts.length === 1) return route.fulfill({ status: 503, headers: { ...cors, 'Retry-After': '2', 'Content-Type': 'application/json' }, body: '{"error":{"code":"ERR_QUEUE_UNAVAILABLE","message":"down"}}' });
      return route.continue();
    });
    await page.goto(`${site.origin}/busy`);
    await rowsWhen(t.id, `select _id from events`, (r) => r.length === 1, 'the page view, after the 503');
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(1900);

    // In the page's own words (this file is compiled without the DOM's types).
    const threw = await page.evaluate(`(() => {
      const circular = {};
      circular.self = circular;
      try {
        tributary.track('circular', circular);
        tributary.track('big', { n: BigInt(1) });
        tributary.identify(undefined, 'not traits');
        tributary.page(42);
        return 'no';
      } catch (err) {
        return String(err);
      }
    })()`);
    expect(threw).toBe('no');
    await page.evaluate(`tributary.flush()`);
  });

  test('with data-respect-dnt, a browser sending Global Privacy Control records nothing', async () => {
    const t = await newTracker();
    site.page('/gpc', html('GPC', t.snippet.replace('<script async ', '<script async data-respect-dnt="true" ')));
    const { page } = await newPage();
    await page.addInitScript("Object.defineProperty(navigator, 'globalPrivacyControl', { value: true })");
    const sent = relayRequests(page);
    await page.goto(`${site.origin}/gpc`);
    await page.evaluate(`tributary.track('ignored')`);
    await page.evaluate(`tributary.flush()`);
    await new Promise((r) => setTimeout(r, 1500));
    expect(sent).toEqual([]);
    expect(await page.evaluate('Object.keys(localStorage)')).toEqual([]);
  });

  test('a session rolls over after its idle minutes, with a session record each', async () => {
    const t = await newTracker();
    site.page('/idle', html('Idle', t.snippet.replace('<script async ', '<script async data-session-minutes="0.02" ')));
    const { page } = await newPage();
    await page.goto(`${site.origin}/idle`);
    await new Promise((r) => setTimeout(r, 1800));
    await page.evaluate(`tributary.track('later')`);
    const events = await rowsWhen(t.id, `select _event, _sid, _uid from events order by _event_at`, (r) => r.length === 2, 'both events');
    expect(events[0]!._sid).not.toBe(events[1]!._sid);
    expect(events[0]!._uid).toBe(events[1]!._uid);
    await rowsWhen(t.id, `select _sid from sessions`, (r) => r.length === 2, 'two sessions');
  });

  test('a tag without data-token waits for init (as an app that reads its token from config does); cookies only when asked', async () => {
    const t = await newTracker();
    const tagOnly = t.snippet.replace(` data-token="${t.token}"`, '');
    site.page('/init', html('Init', tagOnly, `<script>tributary.track('before_init'); tributary.init({ token: ${JSON.stringify(t.token)}, cookieDomain: '127.0.0.1' });</script>`));
    const { page } = await newPage();
    await page.goto(`${site.origin}/init`);
    const events = await rowsWhen(t.id, `select _event, _uid from events order by _event`, (r) => r.length === 2, 'the page view and the call made before init');
    expect(events.map((e) => e._event)).toEqual(['before_init', 'page_view']);
    const cookie = (await page.evaluate('document.cookie')) as string;
    expect(decodeURIComponent(cookie)).toContain(`"u":"${events[0]!._uid as string}"`);
    expect(await page.evaluate(`localStorage.getItem('trb_id')`)).toBeNull();
  });
});
