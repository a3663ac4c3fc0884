import type { Browser, Page } from 'playwright-core';
import { browserSuite, consoleServer, launchChromium, shot as screenshot, signIn, watchProblems } from './browser';
import type { DestinationPicture } from '../../jobs/delivery/destination-series';
import type { TrafficPicture } from '../../src/core/series/traffic';
import { waitFor } from '../helpers/wait';

/**
 * The pictures over time in a real headless Chromium against a real server: the tracker's Traffic
 * tab draws the records accepted and refused per minute (uPlot, under the console's CSP) with the
 * right totals in its table; a destination's page draws what it delivered and its backlog, with
 * the moment the owner disabled it marked. Screenshots land in test-artifacts/console/.
 */

const ADMIN_TOKEN = 'charts-e2e-admin-token-0123456789';

browserSuite('charts e2e')('pictures over time in the console', () => {
  jest.setTimeout(120_000);

  const server = consoleServer('charts-e2e', ADMIN_TOKEN);
  const { adminFetch } = server;
  let base = '';
  let browser: Browser | undefined;
  let page: Page;
  const problems: string[] = [];
  let token = '';

  const send = (url: string, body: string, type = 'application/json') => fetch(`${base}${url}`, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': type }, body });
  const shot = (name: string) => screenshot(page, name);
  const traffic = async () => (await (await adminFetch('/trackers/charts/traffic')).json()) as TrafficPicture;
  const delivery = async () => (await (await adminFetch('/trackers/charts/destinations/warehouse/traffic')).json()) as DestinationPicture;

  beforeAll(async () => {
    await server.start({ TRAFFIC_FLUSH_MS: '200', DELIVERY_SAMPLE_MS: '1000', DELIVERY_DISCOVER_INTERVAL_MS: '200' });
    base = server.base;

    const created = await adminFetch('/trackers', { method: 'POST', body: JSON.stringify({ id: 'charts', name: 'Charts shop' }) });
    expect(created.status).toBe(201);
    token = ((await created.json()) as { token: string }).token;
    expect((await adminFetch('/trackers/charts/destinations', { method: 'POST', body: JSON.stringify({ type: 'local', id: 'warehouse' }) })).status).toBe(201);

    // 5 records accepted, 3 refused: a batch with one bad record, a session without _sid, malformed JSON.
    for (let i = 0; i < 3; i++) expect((await send('/v3/event', JSON.stringify({ _event: 'signup', n: i }))).status).toBe(202);
    expect((await send('/v3/event', JSON.stringify([{ _event: 'order' }, { total: 3 }]))).status).toBe(202);
    expect((await fetch(`${base}/v3/event/tracker.gif?_token=${token}&_event=view`)).status).toBe(200);
    expect((await send('/v3/session', JSON.stringify({ _uid: 'u1' }))).status).toBe(400);
    expect((await send('/v3/user', '{"_uid":')).status).toBe(400);
    await waitFor(async () => {
      const t = (await traffic()).totals;
      return t.accepted === 5 && t.refused === 3;
    }, { message: 'the counts in Redis' });
    await waitFor(async () => (await delivery()).totals.delivered === 5, { timeoutMs: 30_000, message: 'five records delivered' });

    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' })).newPage();
    // A CSP violation is reported as a console error: uPlot must run under the console's policy as it is.
    watchProblems(page, problems);
    await signIn(page, base, ADMIN_TOKEN);
  });

  afterAll(async () => {
    await browser?.close();
    await server.stop();
  });

  afterEach(() => expect(problems.splice(0)).toEqual([]));

  test('the Traffic tab draws the records accepted and refused per minute, with the totals in words and in a table', async () => {
    await page.goto(`${base}/admin#/trackers/charts/traffic`);
    const chart = page.getByTestId('traffic-chart');
    await page.locator('[data-testid="traffic-chart"][data-rendered="true"]').waitFor();
    expect(await chart.getAttribute('data-accepted')).toBe('5');
    expect(await chart.getAttribute('data-refused')).toBe('3');
    expect(await chart.getAttribute('data-points')).toBe('1440');
    // uPlot drew on its canvas, and the canvas has a name in words.
    expect(await chart.locator('canvas').count()).toBe(1);
    const img = chart.getByRole('img');
    expect(await img.getAttribute('aria-label')).toBe('In the last 24 hours: 5 records accepted, 0 duplicates, 3 records refused.');
    const painted = await page.evaluate<number>(
      `(() => { const c = document.querySelector('[data-testid="traffic-chart"] canvas'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; })()`,
    );
    expect(painted).toBeGreaterThan(1000);

    // The last hour, where the records are.
    const lastHour = page.getByRole('group', { name: 'Time range of Records per minute' }).getByRole('button', { name: '1 hour' });
    await lastHour.click();
    expect(await lastHour.getAttribute('aria-pressed')).toBe('true');
    await page.getByText('The same as a table, by hour').click();
    expect(await page.getByTestId('traffic-total-accepted').textContent()).toBe('5');
    expect(await page.getByTestId('traffic-total-refused').textContent()).toBe('3');
    const refusals = page.getByTestId('refusals-table');
    await expect(refusals.textContent()).resolves.toContain('ERR_MISSING_FIELD');
    await expect(refusals.textContent()).resolves.toContain('ERR_MALFORMED_JSON');
    await shot('charts-01-traffic');

    // One endpoint at a time.
    await page.getByLabel('Endpoint').selectOption('/v3/event/tracker.gif');
    await waitFor(async () => (await chart.getAttribute('data-accepted')) === '1' && (await chart.getAttribute('data-refused')) === '0', { message: 'the pixel alone' });
    await page.getByLabel('Endpoint').selectOption('');
  });

  test('a destination’s page draws its deliveries and backlog, and marks the moment it was paused', async () => {
    await page.getByRole('navigation', { name: 'Tracker sections' }).getByRole('link', { name: 'Destinations' }).click();
    await page.getByRole('button', { name: 'Disable warehouse' }).click();
    await waitFor(async () => (await delivery()).markers[0]?.state === 'disabled', { message: 'the disabled marker' });
    // Held back while disabled: the backlog.
    for (let i = 0; i < 2; i++) expect((await send('/v3/event', JSON.stringify({ _event: 'while paused' }))).status).toBe(202);
    await waitFor(async () => (await delivery()).backlog.at(-1) === 2, { message: 'a sample of the backlog' });

    await page.getByRole('link', { name: 'Last 24 hours of warehouse' }).click();
    await page.getByTestId('destination-page').waitFor();
    const delivered = page.locator('[data-testid="delivered-chart"][data-rendered="true"]');
    await delivered.waitFor();
    expect(await delivered.getAttribute('data-delivered')).toBe('5');
    expect((await delivered.getAttribute('data-markers'))?.split(' ')).toEqual(['disabled', 'delivering']);
    const backlog = page.locator('[data-testid="backlog-chart"][data-rendered="true"]');
    await backlog.waitFor();
    expect(await backlog.getAttribute('data-last-backlog')).toBe('2');
    const markers = page.getByTestId('markers-table').locator('tbody tr');
    expect(await markers.count()).toBe(2);
    expect(await markers.nth(0).getAttribute('data-state')).toBe('disabled');
    await expect(markers.nth(0).textContent()).resolves.toContain('Disabled: delivery paused');
    await expect(markers.nth(1).textContent()).resolves.toContain('Started delivering');
    for (const name of ['Time range of Records delivered and dead-lettered per minute', 'Time range of Records waiting (left) and the age of the oldest (right), sampled each minute']) {
      await page.getByRole('group', { name }).getByRole('button', { name: '1 hour' }).click();
    }
    await shot('charts-02-destination');

    // The dark theme: the charts are drawn again in its colours.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.locator('[data-testid="delivered-chart"][data-scheme="dark"]').waitFor();
    await page.locator('[data-testid="backlog-chart"][data-scheme="dark"]').waitFor();
    await shot('charts-03-destination-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });
});
