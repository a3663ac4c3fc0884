import { createHmac } from 'node:crypto';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { Redis } from 'ioredis';
import { freePort } from '../helpers/ports';
import { TEST_REDIS_URL } from '../helpers/redis';
import { browserSuite, consoleServer, launchChromium, shot as screenshot, watchProblems } from './browser';
import { startCustomerSite, type CustomerSite } from './customer-site';

/**
 * The owner's console in a real headless Chromium against a real server process: log in, create a
 * tracker, add the local warehouse, copy the pixel URL from the integration view, watch a pixel and a
 * sendBeacon from another origin arrive in the live view, find both in the warehouse, and see the
 * server's refusals (a bad setting, a destination that cannot work) where the owner needs them.
 */

const ADMIN_TOKEN = 'console-e2e-admin-token-0123456789';
const TRACKER_ID = 'console-e2e';

browserSuite('console e2e')('console in a browser', () => {
  jest.setTimeout(120_000);

  const server = consoleServer('console-e2e', ADMIN_TOKEN);
  let base = '';
  let browser: Browser | undefined;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  /** The customer's site: another origin, with the copied pixel and a sendBeacon call. */
  let site: CustomerSite | undefined;

  let token = '';
  let pixelUrl = '';

  beforeAll(async () => {
    await server.start({ DELIVERY_DISCOVER_INTERVAL_MS: '200' });
    base = server.base;

    site = await startCustomerSite();

    // A non-persistent context: Playwright gives the browser a fresh temporary profile and deletes it on close.
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await context.newPage();
    // The 401 before logging in and the 400s this test provokes are answers the console shows: not counted.
    watchProblems(page, problems);
  });

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await server.stop();
  });

  afterEach(() => {
    // A CSP violation or a script error fails the step it happened in, with its message.
    const seen = problems.splice(0);
    expect(seen).toEqual([]);
  });

  // Browser-side code is passed as text: this file is type-checked without the DOM library.
  const readClipboard = () => page.evaluate<string>('navigator.clipboard.readText()');
  const shot = (name: string) => screenshot(page, name);
  const tab = (name: string) => page.getByRole('navigation', { name: 'Tracker sections' }).getByRole('link', { name });
  const liveEntries = () => page.getByTestId('live-entry');
  const entryWith = (text: string): Locator => liveEntries().filter({ hasText: text });

  test('logs in with the admin token', async () => {
    await page.goto(`${base}/admin`);
    const tokenField = page.getByLabel('Admin token');
    await tokenField.waitFor();
    await shot('01-login');

    await tokenField.fill('not-the-admin-token-at-all-000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: /not the admin token/i }).waitFor();

    await tokenField.fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Trackers' }).waitFor();
  });

  test('names a tracker the relay cannot read above the list, and no longer once it is mended', async () => {
    const redis = new Redis(TEST_REDIS_URL);
    try {
      await redis.set(`${server.prefix}:tracker:hand-edited`, JSON.stringify({ id: 'hand-edited', name: 'Edited by hand', tokens: 'none' }));
      await redis.sadd(`${server.prefix}:trackers`, 'hand-edited');
      await page.reload();
      const alert = page.getByTestId('unreadable-trackers');
      await alert.filter({ hasText: /Tracker hand-edited cannot be read: its stored JSON is not a tracker \(tokens: .*\)\. Senders to it are refused \(503\)/ }).waitFor();
      await shot('01b-unreadable-tracker');
      await redis.srem(`${server.prefix}:trackers`, 'hand-edited');
      await page.reload();
      await page.getByRole('heading', { level: 2, name: 'Your trackers' }).waitFor();
      await page.getByText(/No tracker yet|Demo/).first().waitFor();
      expect(await alert.count()).toBe(0);
    } finally {
      redis.disconnect();
    }
  });

  test('creates a tracker and shows its token once, with a copy button', async () => {
    const form = page.locator('form').filter({ has: page.getByRole('button', { name: 'Create tracker' }) });
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('Console E2E');
    await form.getByLabel('Id (optional)', { exact: true }).fill(TRACKER_ID);
    await form.getByLabel('Time zone', { exact: true }).fill('Europe/Paris');
    await form.getByRole('button', { name: 'Create tracker' }).click();

    const created = page.getByTestId('created-tracker');
    await created.waitFor();
    token = (await created.locator('code.copy-value').textContent()) ?? '';
    expect(token).toMatch(/^trk_[A-Za-z0-9_-]{40,}$/);
    await expect(created.getByRole('button', { name: 'Copy the token of Console E2E' }).isVisible()).resolves.toBe(true);
    await page.getByRole('row').filter({ hasText: TRACKER_ID }).waitFor();
    await shot('02-trackers');
  });

  test('adds the local warehouse as a destination', async () => {
    await page.getByRole('link', { name: 'Add a destination' }).click();
    await page.getByRole('heading', { level: 2, name: 'Add a destination' }).waitFor();
    const form = page.getByTestId('add-destination-form');
    await form.getByRole('combobox', { name: 'Type', exact: true }).selectOption('local');
    await form.getByRole('group', { name: 'local settings' }).waitFor();
    await form.getByRole('button', { name: 'Add destination' }).click();
    await page.getByTestId('destination-local').waitFor();
    await page.getByRole('status').filter({ hasText: 'Destination local added.' }).waitFor();
  });

  test('copies the event pixel URL from the integration view', async () => {
    await tab('Integration').click();
    await page.getByRole('button', { name: 'Copy pixel URL for event' }).click();
    pixelUrl = await readClipboard();
    expect(pixelUrl.startsWith(`${base}/v3/event/tracker.gif?`)).toBe(true);
    expect(new URL(pixelUrl).searchParams.get('_token')).toBe(token);
    expect(new URL(pixelUrl).searchParams.get('_event')).toBe('signup');

    // The website snippet comes first, token and address filled in.
    await page.getByRole('button', { name: 'Copy website snippet' }).click();
    expect(await readClipboard()).toContain(`<script async src="${base}/sdk.js" data-token="${token}"></script>`);

    // Segment's SDKs, folded away: the relay's address and the token as their write key.
    await page.getByText('Settings for each SDK').click();
    await page.getByRole('button', { name: 'Copy Node.js (@segment/analytics-node)' }).click();
    expect(await readClipboard()).toContain(`new Analytics({ writeKey: "${token}", host: "${base}" });`);

    await page.getByRole('button', { name: 'Copy POST URL for event' }).click();
    const postUrl = await readClipboard();
    expect(postUrl).toBe(`${base}/v3/event`);

    // The webhook builder encodes what it is given.
    const builder = page.getByRole('region', { name: 'Webhook URL builder' });
    await builder.getByRole('textbox', { name: '_event', exact: true }).fill('stripe invoice.paid');
    await builder.getByLabel('Other fields', { exact: true }).fill('amount=42\nnote=a&b');
    const webhookUrl = `${base}/v3/event?_token=${token}&_event=stripe%20invoice.paid&amount=42&note=a%26b`;
    await builder.getByTestId('webhook-url').locator('code').filter({ hasText: webhookUrl }).waitFor();

    site!.serve({ pixelUrl, postUrl, beacon: { _token: token, _event: 'beacon_test', _uid: 'visitor-1', page: '/pricing' } });
    await shot('03-integration');
  });

  test('shows the pixel and the beacon of another site in the live view as they arrive', async () => {
    await tab('Live').click();
    await page.getByTestId('live-connection').filter({ hasText: 'Connected' }).waitFor();

    const customer = await context.newPage();
    await customer.goto(site!.origin);
    await expect(customer.evaluate<boolean>('window.beaconQueued')).resolves.toBe(true);
    await customer.waitForFunction("document.getElementById('pixel').complete");

    const beacon = entryWith('beacon_test');
    const pixel = entryWith('tracker.gif');
    await beacon.waitFor({ timeout: 15_000 });
    await pixel.waitFor({ timeout: 15_000 });
    await expect(beacon.getAttribute('data-state')).resolves.toBe('accepted');
    await expect(pixel.getAttribute('data-state')).resolves.toBe('accepted');
    await expect(pixel.locator('summary').textContent()).resolves.toMatch(/pixel \/v3\/event\/tracker\.gif.*1 event: signup/);
    await customer.close();

    // Expanded: the normalized record and where it came from.
    await beacon.locator('summary').click();
    const detail = beacon.locator('.live-detail');
    await expect(detail.textContent()).resolves.toContain('"event": "beacon_test"');
    await expect(detail.textContent()).resolves.toContain(site!.origin);
    await expect(detail.textContent()).resolves.toContain('text/plain');

    // A refused request is in the list too, marked with its code and message.
    const refused = await fetch(`${base}/v3/event?_token=${encodeURIComponent(token)}&plan=pro`);
    expect(refused.status).toBe(400);
    const rejected = liveEntries().and(page.locator('[data-state="rejected"]'));
    await rejected.waitFor();
    await expect(rejected.locator('summary').textContent()).resolves.toMatch(/400 rejected ERR_MISSING_FIELD[\s\S]*_event/);
    await expect(page.locator('main').textContent()).resolves.not.toContain(token);
    await shot('04-live');

    await page.getByRole('button', { name: 'Pause' }).click();
    await fetch(`${base}/v3/event?_token=${encodeURIComponent(token)}&_event=while_paused`);
    await page.getByText(/1 waiting/).waitFor();
    expect(await entryWith('while_paused').count()).toBe(0);
    await page.getByRole('button', { name: 'Resume' }).click();
    await entryWith('while_paused').waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect(liveEntries().count()).resolves.toBe(0);
  });

  test('finds both events in the local warehouse', async () => {
    await tab('Warehouse').click();
    await page.getByRole('heading', { level: 2, name: 'Warehouse' }).waitFor();
    // The local destination added earlier on another tab is known here.
    await expect(page.getByText('This tracker has no local destination').count()).resolves.toBe(0);
    const sql = page.getByLabel('SQL', { exact: true });
    await expect(sql.inputValue()).resolves.toBe('SELECT * FROM events ORDER BY _received_at DESC LIMIT 50');
    await sql.fill("SELECT _event, _uid, page FROM events WHERE _event IN ('signup', 'beacon_test') ORDER BY _event");
    const run = page.getByRole('button', { name: 'Run query' });
    const results = page.getByTestId('query-results');
    const runQuery = async () => {
      await Promise.all([page.waitForResponse((r) => r.url().endsWith(`/trackers/${TRACKER_ID}/query`)), run.click()]);
      // The button reads "Running…" until the answer is drawn.
      await run.waitFor();
    };
    // Delivery is asynchronous: run the query again until both rows are there, for at most 30 s.
    const deadline = Date.now() + 30_000;
    let rows: string[] = [];
    while (Date.now() < deadline) {
      await runQuery();
      rows = (await results.count()) > 0 ? await results.locator('tbody tr').allTextContents() : [];
      if (rows.length === 2) break;
      await page.waitForTimeout(500);
    }
    expect(rows).toEqual(['beacon_testvisitor-1/pricing', 'signupuser-42NULL']);
    await expect(page.getByTestId('query-status').textContent()).resolves.toMatch(/^2 rows in \d+ ms\.$/);
    await shot('05-warehouse');

    await sql.fill('SELECT nope FROM events');
    await runQuery();
    await page.getByTestId('query-error').filter({ hasText: /nope/ }).waitFor();
  });

  test('shows delivery health', async () => {
    await tab('Health').click();
    const row = page.getByTestId('health-table').getByRole('row').filter({ hasText: 'local' });
    await row.waitFor();
    // Columns: queued, in flight, delivered, failed, lag… the three events accepted so far are delivered.
    const deadline = Date.now() + 15_000;
    let delivered = 0;
    while (Date.now() < deadline) {
      delivered = Number((await row.locator('td').nth(2).textContent())?.replace(/\D/g, ''));
      if (delivered >= 3) break;
      await page.waitForTimeout(500);
    }
    expect(delivered).toBeGreaterThanOrEqual(3);
    // The relay-wide Redis memory, whatever limit the test Redis has (none: "no limit known").
    const memory = page.getByTestId('redis-memory');
    await memory.getByText('Used', { exact: true }).waitFor();
    expect(await memory.locator('.badge').textContent()).toMatch(/^(ok|above the warn watermark|full: ingest refused|no limit known)$/);
    await shot('06-health');
  });

  test('shows a bad setting under its field, and the exact error of a destination that cannot work', async () => {
    await tab('Destinations').click();
    const form = page.getByTestId('add-destination-form');
    await form.getByRole('combobox', { name: 'Type', exact: true }).selectOption('google-sheets');
    await form.getByLabel('Id (optional)', { exact: true }).fill('sheets');
    const spreadsheetId = form.getByLabel('Spreadsheet', { exact: true });
    await spreadsheetId.fill('not a spreadsheet id!');
    // Disabled: only the test below talks to it; no delivery is attempted.
    await form.getByLabel('Enabled', { exact: true }).uncheck();
    await form.getByRole('button', { name: 'Add destination' }).click();

    await form.locator('[aria-invalid="true"]').waitFor();
    await expect(spreadsheetId.getAttribute('aria-invalid')).resolves.toBe('true');
    const describedBy = (await spreadsheetId.getAttribute('aria-describedby')) ?? '';
    const errorId = describedBy.split(' ').find((id) => id.endsWith('-error'));
    expect(errorId).toBeDefined();
    // The message as the server wrote it, without the field path in front (the field says which).
    await expect(page.locator(`[id="${errorId}"]`).textContent()).resolves.toBe("a spreadsheet's id is the part of its address between /d/ and /edit; the whole address may be pasted too");
    // Focus moved to the field at fault (the console moves it once the error has rendered).
    const fieldId = await spreadsheetId.getAttribute('id');
    await page.waitForFunction(`document.activeElement?.id === ${JSON.stringify(fieldId)}`, undefined, { timeout: 5000 });
    await shot('07-destination-invalid');

    // A well-formed destination whose endpoint refuses connections: saved, then its test fails.
    const closedPort = await freePort();
    await spreadsheetId.fill('abcdefghij0123456789');
    await form.getByTestId('advanced-settings').locator('summary').click();
    await form.getByLabel('API address (emulators and private endpoints)', { exact: true }).fill(`http://127.0.0.1:${closedPort}/`);
    await form.getByRole('button', { name: 'Add destination' }).click();
    const sheets = page.getByTestId('destination-sheets');
    await sheets.waitFor();
    await sheets.getByRole('button', { name: 'Test connection of sheets' }).click();
    const result = page.getByTestId('test-result-sheets');
    await result.getByText('Connection failed').waitFor({ timeout: 30_000 });

    const api = await fetch(`${base}/admin/api/trackers/${TRACKER_ID}/destinations/sheets/test`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    const expected = (await api.json()) as { ok: boolean; error: { kind: string; message: string } };
    expect(expected.ok).toBe(false);
    await expect(result.locator('.error-text').textContent()).resolves.toBe(expected.error.message);
    await shot('08-destinations');
  });

  test('adds a GitHub webhook source, copies its URL and secret, and shows a signed and a forged delivery with their verdicts', async () => {
    await tab('Sources').click();
    await page.getByRole('heading', { level: 2, name: 'Add a webhook source' }).waitFor();
    const form = page.getByTestId('add-source-form');
    await form.getByRole('combobox', { name: 'Sender', exact: true }).selectOption('github');
    await form.getByRole('button', { name: 'Add source' }).click();

    const sourcePage = page.getByTestId('source-page');
    await sourcePage.waitFor();
    await page.getByRole('button', { name: 'Copy the webhook URL of github' }).click();
    const url = await readClipboard();
    expect(url).toBe(`${base}/v3/webhooks/${TRACKER_ID}/github`);
    await page.getByRole('button', { name: 'Copy the signing secret of github' }).click();
    const secret = await readClipboard();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await expect(sourcePage.textContent()).resolves.toMatch(/Settings → Webhooks → Add webhook[\s\S]*Payload URL/);
    await page.getByText('No delivery yet').waitFor();

    const raw = JSON.stringify({ action: 'opened', issue: { number: 1 }, sender: { login: 'octocat' } });
    const send = (key: string, delivery: string) =>
      fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-GitHub-Event': 'issues', 'X-GitHub-Delivery': delivery, 'X-Hub-Signature-256': `sha256=${createHmac('sha256', key).update(raw).digest('hex')}` }, body: raw });
    expect((await send(secret, 'e2e-delivery-1')).status).toBe(200);
    expect((await send('a-forged-secret', 'e2e-delivery-2')).status).toBe(401);

    const deliveries = page.getByTestId('source-delivery');
    const accepted = deliveries.and(page.locator('[data-verdict="accepted"]'));
    const refused = deliveries.and(page.locator('[data-verdict="refused"]'));
    await accepted.waitFor({ timeout: 15_000 });
    await refused.waitFor({ timeout: 15_000 });
    await expect(accepted.textContent()).resolves.toMatch(/accepted[\s\S]*github\.issues\.opened[\s\S]*e2e-delivery-1/);
    await expect(refused.textContent()).resolves.toMatch(/401 refused: bad-signature[\s\S]*X-Hub-Signature-256 does not match/);
    await shot('09-webhook-source');

    await page.getByRole('button', { name: 'Remove source github' }).click();
    await page.getByRole('button', { name: 'Remove github for good' }).click();
    await page.getByText('No webhook source yet').waitFor();
  });

  test('sets personal-data rules in Settings, names a refused one, lists them in the integration view, and stores the masked value', async () => {
    await tab('Settings').click();
    const rules = page.getByRole('region', { name: 'Personal data' });
    await rules.getByText('No rules: every property is stored as sent.').waitFor();
    await rules.getByRole('textbox', { name: 'Property', exact: true }).fill('email');
    await rules.getByRole('combobox', { name: 'Action', exact: true }).selectOption('mask-email');
    await rules.getByRole('button', { name: 'Add rule' }).click();
    await rules.getByRole('status').filter({ hasText: 'Rule saved: email → mask-email.' }).waitFor();
    await rules.getByRole('row').filter({ hasText: 'mask-email' }).filter({ hasText: 'email' }).waitFor();

    await rules.getByRole('textbox', { name: 'Property', exact: true }).fill('_uid');
    await rules.getByRole('combobox', { name: 'Action', exact: true }).selectOption('drop');
    await rules.getByRole('button', { name: 'Add rule' }).click();
    await rules.getByRole('alert').filter({ hasText: 'rule _uid → drop: _uid takes hash, not drop' }).waitFor();
    await shot('10-personal-data');

    await tab('Integration').click();
    const listed = page.getByRole('region', { name: 'Personal data' });
    // The Settings tab's section of the same name may still be on the page for a moment.
    await listed.getByRole('row').filter({ hasText: 'stored as first character' }).waitFor();
    await expect(listed.getByRole('row').filter({ hasText: 'email' }).textContent()).resolves.toMatch(/emailmask-emailstored as first character \+ \*\*\*@ \+ domain/);

    const sent = await fetch(`${base}/v3/event`, { method: 'POST', headers: { Authorization: `Tracker ${token}` }, body: JSON.stringify({ _event: 'masked', email: 'grace.hopper@example.com' }) });
    expect(sent.status).toBe(202);
    const deadline = Date.now() + 30_000;
    let stored: unknown[][] = [];
    while (Date.now() < deadline && stored.length === 0) {
      const res = await fetch(`${base}/admin/api/trackers/${TRACKER_ID}/query`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ sql: "SELECT email FROM events WHERE _event = 'masked'" }) });
      stored = res.ok ? ((await res.json()) as { rows: unknown[][] }).rows : [];
      if (stored.length === 0) await page.waitForTimeout(500);
    }
    expect(stored).toEqual([['g***@example.com']]);
  });

  test('fits a narrow window and signs out', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await tab('Integration').click();
    await page.getByRole('button', { name: 'Copy pixel URL for event' }).waitFor();
    await expect(page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth')).resolves.toBe(true);
    await shot('11-integration-narrow');

    await page.getByRole('button', { name: 'Account: break-glass admin token' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    const after = await page.evaluate(() => fetch('/admin/api/trackers').then((r) => r.status));
    expect(after).toBe(401);
  });

  test('an admin removes the tracker from its Settings, after confirming, and its token stops', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base}/admin/#/trackers/${TRACKER_ID}/settings`);
    const signIn = page.getByLabel('Admin token');
    const heading = page.getByRole('heading', { level: 2, name: 'Remove this tracker' });
    // Signed out by the step before (when it ran).
    await signIn.or(heading).first().waitFor();
    if (await signIn.isVisible()) {
      await signIn.fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    await heading.waitFor();
    await shot('12-remove-tracker');
    await page.getByRole('button', { name: `Remove tracker ${TRACKER_ID}` }).click();
    await page.getByRole('button', { name: `Remove ${TRACKER_ID} for good` }).click();
    await page.getByRole('heading', { level: 1, name: 'Trackers' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Your trackers' }).waitFor();
    await expect(page.getByRole('row').filter({ hasText: TRACKER_ID }).count()).resolves.toBe(0);
    const sent = await fetch(`${base}/v3/event`, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': 'application/json' }, body: '{"_event":"gone"}' });
    expect(sent.status).toBe(401);
  });
});
