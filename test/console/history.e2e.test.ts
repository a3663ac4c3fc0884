import type { Browser, Page } from 'playwright-core';
import { browserSuite, consoleServer, launchChromium, shot as screenshot, signIn, watchProblems } from './browser';
import { waitFor } from '../helpers/wait';

/**
 * The request history in a real headless Chromium against a real server: the tracker's History
 * tab lists accepted and refused requests with the reason and searches them; the Unknown tokens
 * page lists requests whose token matched no tracker, with the token's first characters only.
 */

const ADMIN_TOKEN = 'history-e2e-admin-token-0123456789';

browserSuite('history e2e')('request history in the console', () => {
  jest.setTimeout(120_000);

  const server = consoleServer('history-e2e', ADMIN_TOKEN);
  const { adminFetch } = server;
  let base = '';
  let browser: Browser | undefined;
  let page: Page;
  const problems: string[] = [];
  let token = '';
  const unknownToken = `trk_Zz${'9'.repeat(41)}`;

  const send = (url: string, body: unknown, auth = token) =>
    fetch(`${base}${url}`, { method: 'POST', headers: { Authorization: `Tracker ${auth}`, 'Content-Type': 'application/json', 'User-Agent': 'history-e2e/1.0' }, body: JSON.stringify(body) });
  const shot = (name: string) => screenshot(page, name);
  const entries = () => page.getByTestId('history-entry');

  beforeAll(async () => {
    await server.start();
    base = server.base;

    const created = await adminFetch('/trackers', { method: 'POST', body: JSON.stringify({ id: 'shop', name: 'Shop' }) });
    expect(created.status).toBe(201);
    token = ((await created.json()) as { token: string }).token;
    expect((await send('/v3/event', { _event: 'signup', plan: 'pro' })).status).toBe(202);
    expect((await send('/v3/event', [{ _event: 'a' }, { plan: 'no event' }])).status).toBe(202);
    expect((await send('/v3/session', { _uid: 'u1' })).status).toBe(400);
    expect((await send('/v3/event', { _event: 'x' }, unknownToken)).status).toBe(401);
    await waitFor(async () => ((await (await adminFetch('/trackers/shop/requests')).json()) as { total: number }).total >= 3, { message: 'three kept requests' });

    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    watchProblems(page, problems);
    await signIn(page, base, ADMIN_TOKEN);
  });

  afterAll(async () => {
    await browser?.close();
    await server.stop();
  });

  afterEach(() => expect(problems.splice(0)).toEqual([]));

  test('the History tab lists accepted and refused requests with the reason, newest first', async () => {
    await page.goto(`${base}/admin#/trackers/shop/history`);
    await page.getByRole('heading', { name: 'Request history' }).waitFor();
    await waitFor(async () => (await entries().count()) === 3, { message: 'three entries' });
    await expect(entries().nth(0).getAttribute('data-state')).resolves.toBe('rejected');
    await expect(entries().nth(0).textContent()).resolves.toMatch(/400 refused ERR_MISSING_FIELD.*POST \/v3\/session/);
    await expect(entries().nth(1).getAttribute('data-state')).resolves.toBe('partial');
    await expect(entries().nth(1).textContent()).resolves.toContain('1 stored, 1 refused (ERR_MISSING_FIELD)');
    await expect(entries().nth(2).textContent()).resolves.toMatch(/202 1 stored.*POST \/v3\/event/);
    await expect(page.getByTestId('history-summary').textContent()).resolves.toBe('3 requests kept.');

    await entries().nth(0).locator('summary').click();
    const detail = entries().nth(0).locator('.live-detail');
    await expect(detail.textContent()).resolves.toContain('history-e2e/1.0');
    await shot('history-01-tracker');
  });

  test('searches by status, code and text on the server', async () => {
    const search = page.getByRole('search', { name: 'Search Request history' });
    await search.getByLabel('Status').selectOption('accepted');
    await search.getByRole('button', { name: 'Search' }).click();
    await waitFor(async () => (await entries().count()) === 2, { message: 'two accepted' });
    await expect(page.getByTestId('history-summary').textContent()).resolves.toBe('2 of the 3 kept requests match.');

    await search.getByLabel('Status').selectOption('');
    await search.getByLabel('Error code').fill('ERR_MISSING_FIELD');
    await search.getByLabel('Text').fill('/v3/session');
    await search.getByRole('button', { name: 'Search' }).click();
    await waitFor(async () => (await entries().count()) === 1, { message: 'one match' });
    await shot('history-02-search');

    await search.getByLabel('Text').fill('nothing-like-this');
    await search.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No kept request matches.').waitFor();
    await search.getByRole('button', { name: 'Clear' }).click();
    await waitFor(async () => (await entries().count()) === 3, { message: 'all three again' });
  });

  test('the Unknown tokens page shows requests whose token matched no tracker, never the token', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Unknown tokens' }).click();
    await page.getByRole('heading', { level: 1, name: 'Requests with an unknown token' }).waitFor();
    await waitFor(async () => (await entries().count()) === 1, { message: 'one unknown-token request' });
    const text = (await entries().nth(0).textContent()) ?? '';
    expect(text).toContain('ERR_INVALID_TOKEN');
    expect(text).toContain('token trk_Zz99…');
    expect(await page.content()).not.toContain(unknownToken);
    await shot('history-03-unknown-tokens');
  });

  test('the top bar links to the API description', async () => {
    const link = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API description' });
    expect(await link.getAttribute('href')).toBe('/openapi.json');
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/v3/webhooks/{tracker}/{source}');
  });
});
