import type { Browser, Page } from 'playwright-core';
import { browserSuite, consoleServer, launchChromium, shot as screenshot, signIn, watchProblems } from './browser';
import type { DestinationPicture } from '../../jobs/delivery/destination-series';
import type { Destination } from '../../src/core/trackers/types';
import { waitFor } from '../helpers/wait';

/**
 * The rule editor of a destination's page in a real headless Chromium against a real server: the
 * preview runs the draft over the tracker's last records as the owner types, a filter that does
 * not parse is named under its field with its column, and saved rules apply to the next records,
 * whose skipped count the page then shows.
 */

const ADMIN_TOKEN = 'rules-e2e-admin-token-0123456789';

browserSuite('rules e2e')('destination rules in the console', () => {
  jest.setTimeout(120_000);

  const server = consoleServer('rules-e2e', ADMIN_TOKEN);
  const { adminFetch } = server;
  let base = '';
  let browser: Browser | undefined;
  let page: Page;
  const problems: string[] = [];
  let token = '';

  const send = (body: unknown) => fetch(`${base}/v3/event`, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const stored = async () => ((await (await adminFetch('/trackers/shop/destinations')).json()) as { destinations: Destination[] }).destinations.find((d) => d.id === 'sheet')!;
  const delivery = async () => (await (await adminFetch('/trackers/shop/destinations/sheet/traffic')).json()) as DestinationPicture;

  beforeAll(async () => {
    await server.start({ DELIVERY_SAMPLE_MS: '1000', DELIVERY_DISCOVER_INTERVAL_MS: '200' });
    base = server.base;
    const created = await adminFetch('/trackers', { method: 'POST', body: JSON.stringify({ id: 'shop', name: 'Shop' }) });
    expect(created.status).toBe(201);
    token = ((await created.json()) as { token: string }).token;
    expect((await adminFetch('/trackers/shop/destinations', { method: 'POST', body: JSON.stringify({ type: 'local', id: 'sheet' }) })).status).toBe(201);
    const sent = await send([
      { _event: 'page_view', path: '/' },
      { _event: 'signup', plan: 'pro', email: 'a@example.com' },
      { _event: 'order', total: 42, currency: 'EUR', email: 'a@example.com' },
      { _event: 'page_view', path: '/pricing' },
    ]);
    expect(sent.status).toBe(202);
    await waitFor(async () => (await delivery()).totals.delivered === 4, { timeoutMs: 30_000, message: 'four records delivered' });

    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 }, colorScheme: 'light' })).newPage();
    watchProblems(page, problems);
    await signIn(page, base, ADMIN_TOKEN);
  });

  afterAll(async () => {
    await browser?.close();
    await server.stop();
  });

  afterEach(() => expect(problems.splice(0)).toEqual([]));

  test('the preview follows the draft as it is typed, and a bad filter is named with its column', async () => {
    await page.goto(`${base}/admin#/trackers/shop/destinations/sheet`);
    const editor = page.getByTestId('rules-editor');
    await editor.waitFor();
    const counts = page.getByTestId('rules-preview-counts');
    await waitFor(async () => (await counts.textContent())?.includes('Of the last 4 records: 4 delivered'), { message: 'the preview without rules' });

    await page.getByTestId('rules-filter').fill("_event in ['signup', 'order'] && ");
    await page.getByText('at column 34: Unexpected token: EOF').waitFor();
    await page.getByTestId('rules-filter').fill("_event in ['signup', 'order']");
    await waitFor(async () => (await counts.textContent())?.includes('2 delivered, 2 filtered out'), { message: 'the preview of the filter' });
    await page.getByTestId('rules-selection').selectOption('drop');
    await page.getByTestId('rules-names').fill('email');
    await page.getByTestId('rules-renames').fill('total=amount');
    await waitFor(async () => (await page.getByTestId('rules-preview').textContent())?.includes('"amount":42'), { message: 'the renamed total in the preview' });
    expect(await page.getByTestId('rules-preview').textContent()).not.toContain('a@example.com');
    await screenshot(page, 'rules-01-editor');
  });

  test('saved rules apply to the next records, and the page counts what they kept out', async () => {
    await page.getByRole('button', { name: 'Save rules' }).click();
    await page.getByText('Rules saved').waitFor();
    expect((await stored()).rules).toEqual({ filter: "_event in ['signup', 'order']", drop: ['email'], rename: { total: 'amount' } });

    // A second, as every process sees a change within one.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await send([{ _event: 'page_view' }, { _event: 'order', total: 7, email: 'b@example.com' }])).status).toBe(202);
    await waitFor(async () => (await delivery()).totals.skipped === 1, { timeoutMs: 30_000, message: 'one record skipped' });
    await page.reload();
    await waitFor(async () => (await page.getByTestId('rules-skipped').textContent())?.startsWith('1 record out by the filter'), { message: 'the skipped count on the page' });
    const delivered = page.locator('[data-testid="delivered-chart"][data-rendered="true"]');
    await delivered.waitFor();
    expect(await delivered.getAttribute('data-skipped')).toBe('1');
    await screenshot(page, 'rules-02-saved');
  });

  test('a backfill is started, followed and cancelled from the destination page', async () => {
    const card = page.getByTestId('backfill-card');
    expect(await card.getByLabel('Users and sessions too').isChecked()).toBe(true);
    await card.getByRole('button', { name: 'Start backfill' }).click();
    await card.getByText('Backfill started').waitFor();
    await waitFor(async () => (await card.getByTestId('backfill-progress').textContent())?.startsWith('Under way'), { message: 'the backfill under way on the page' });
    expect(await card.getByTestId('backfill-progress').textContent()).toContain('(events, users, sessions received');
    await card.getByRole('button', { name: 'Cancel backfill' }).click();
    await card.getByText('Backfill cancelled').waitFor();
    await waitFor(async () => (await card.getByTestId('backfill-progress').textContent())?.startsWith('Cancelled'), { message: 'the cancelled backfill on the page' });
    await screenshot(page, 'rules-03-backfill');
  });
});
