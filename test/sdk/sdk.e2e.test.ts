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
    expect(problems.splice(0)).toEqual([]);
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
});
