import type { Browser, Page } from 'playwright-core';
import { browserSuite, consoleServer, launchChromium, shot as screenshot, signIn, watchProblems } from './browser';
import { startBigQueryFake, type BigQueryFake } from '../fakes/bigquery/server';
import { ServiceAccounts as SheetsFakeKeys } from '../fakes/service-accounts';
import { SheetsFake } from '../fakes/sheets/server';

/**
 * Connecting a Sheet from the console as someone who has never used Google Cloud: the steps with
 * their links, the spreadsheet's address pasted as it is, the key file given as Google downloads
 * it (its e-mail shown at once), the advanced settings closed, Test before saving answering an
 * unshared spreadsheet with the next step, then the destination saved with the id and the key kept
 * as a file. Against the Sheets fake, which checks the key's self-signed JWTs.
 */

const ADMIN_TOKEN = 'google-setup-e2e-admin-token-0123456789';
const TRACKER = 'shop';

browserSuite('google setup e2e')('connecting Google Sheets from the console', () => {
  jest.setTimeout(120_000);

  const server = consoleServer('google-setup-e2e', ADMIN_TOKEN);
  let fake: SheetsFake;
  let bigquery: BigQueryFake;
  let browser: Browser | undefined;
  let page: Page;
  const problems: string[] = [];
  const shot = (name: string) => screenshot(page, name);

  beforeAll(async () => {
    fake = await SheetsFake.start();
    bigquery = await startBigQueryFake();
    await server.start();
    expect((await server.adminFetch('/trackers', { method: 'POST', body: JSON.stringify({ id: TRACKER, name: 'Shop' }) })).status).toBe(201);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    watchProblems(page, problems);
    await signIn(page, server.base, ADMIN_TOKEN);
  });

  afterAll(async () => {
    await browser?.close();
    await server.stop();
    await fake?.close();
    await bigquery?.close();
  });

  afterEach(() => expect(problems.splice(0)).toEqual([]));

  test('pastes the address and the key, tests before saving, is told to share, shares, and saves', async () => {
    const spreadsheet = fake.createSpreadsheet('Marketing');
    const key = fake.accounts.create('tributary', 'shop-analytics');
    const email = 'tributary@shop-analytics.iam.gserviceaccount.com';
    fake.denied.add(email); // not shared yet

    await page.goto(`${server.base}/admin#/trackers/${TRACKER}/destinations`);
    await page.getByRole('heading', { level: 2, name: 'Add a destination' }).waitFor();
    const form = page.getByTestId('add-destination-form');
    await form.getByRole('combobox', { name: 'Type', exact: true }).selectOption('google-sheets');

    // The steps outside Tributary come first, each with its page.
    const steps = form.getByRole('list', { name: 'Before you start' });
    await expect(steps.getByRole('listitem').count()).resolves.toBe(4);
    await expect(steps.getByRole('link', { name: 'Open the page' }).first().getAttribute('href')).resolves.toBe('https://console.cloud.google.com/projectcreate');
    // Everything but the spreadsheet and the key waits under Advanced, closed.
    const advanced = form.getByTestId('advanced-settings');
    await expect(advanced.evaluate((d) => (d as { open: boolean }).open)).resolves.toBe(false);
    await expect(form.getByLabel('Events tab per month', { exact: true }).isVisible()).resolves.toBe(false);

    await form.getByLabel('Spreadsheet', { exact: true }).fill(`https://docs.google.com/spreadsheets/d/${spreadsheet.id}/edit#gid=0`);
    await form.getByLabel('Service-account key file').setInputFiles({ name: 'shop-analytics-1a2b3c4d5e6f.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(key, null, 2)) });
    const account = form.getByTestId('key-account');
    await account.getByText(email, { exact: true }).first().waitFor();
    await expect(account.textContent()).resolves.toContain(`Share the spreadsheet with ${email} as Editor`);
    await shot('google-01-key');

    // This fake stands in for Google: its address is an advanced setting.
    await advanced.locator('summary').click();
    // The advanced settings in words, each with the name the CLI and the config file use.
    const writes = advanced.getByLabel('Write requests a minute', { exact: true });
    await expect(writes.getAttribute('aria-describedby').then((id) => page.locator(`[id="${id}"]`).textContent())).resolves.toContain('Setting: writeRequestsPerMinute.');
    await expect(advanced.getByLabel('When the spreadsheet is full', { exact: true }).locator('option').allTextContents()).resolves.toEqual(['(default)', 'Continue in the next spreadsheet', 'Pause delivery']);
    for (const label of ['Read requests a minute', 'Most cells a spreadsheet may hold', 'Spreadsheets to continue in when full', 'Wait for an answer (ms)']) await advanced.getByLabel(label, { exact: true }).waitFor();
    await form.getByLabel('API address (emulators and private endpoints)', { exact: true }).fill(fake.url);
    await form.getByRole('button', { name: 'Test', exact: true }).click();
    const outcome = form.getByTestId('settings-test');
    await outcome.getByText(`is not shared with ${email}: open it, click Share, paste ${email}, choose Editor, and send.`).waitFor();
    await shot('google-02-not-shared');
    // Nothing was saved by the test.
    await expect(((await (await server.adminFetch(`/trackers/${TRACKER}/destinations`)).json()) as { destinations: unknown[] }).destinations).toEqual([]);

    fake.denied.delete(email); // shared, as the message said
    await form.getByRole('button', { name: 'Test', exact: true }).click();
    await outcome.getByText('Test passed').waitFor();
    await form.getByRole('button', { name: 'Add destination' }).click();
    await page.getByTestId('destination-google-sheets').waitFor();

    const saved = (await (await server.adminFetch(`/trackers/${TRACKER}/destinations`)).json()) as { destinations: Array<{ settings: Record<string, unknown> }> };
    expect(saved.destinations[0]!.settings).toEqual({ spreadsheetId: spreadsheet.id, endpoint: fake.url, credentials: '[redacted]' });
    expect(JSON.stringify(saved)).not.toContain('PRIVATE KEY');
    await shot('google-03-saved');
  });

  test('BigQuery: project and dataset first, the roles for the key’s e-mail, a key Google does not know refused with the next step, then saved', async () => {
    const known = bigquery.accounts.create('tributary-bq', 'shop-analytics');
    const unknown = new SheetsFakeKeys().create('deleted-key', 'shop-analytics'); // signed by a key BigQuery does not know
    await page.goto(`${server.base}/admin#/trackers/${TRACKER}/destinations`);
    const form = page.getByTestId('add-destination-form');
    await form.getByRole('combobox', { name: 'Type', exact: true }).selectOption('bigquery');
    const steps = form.getByRole('list', { name: 'Before you start' });
    await expect(steps.getByRole('link', { name: 'Open the page' }).nth(1).getAttribute('href')).resolves.toBe('https://console.cloud.google.com/billing/linkedaccount');
    await expect(form.getByTestId('advanced-settings').evaluate((d) => (d as { open: boolean }).open)).resolves.toBe(false);

    // Required fields: their labels end with an asterisk that screen readers skip, as the role query does.
    await form.getByRole('textbox', { name: 'Project ID', exact: true }).fill('shop-analytics');
    await form.getByRole('textbox', { name: 'Dataset', exact: true }).fill('tributary');
    await form.getByLabel('…or paste the key').fill(JSON.stringify(unknown));
    const account = form.getByTestId('key-account');
    await expect(account.textContent()).resolves.toContain('Grant deleted-key@shop-analytics.iam.gserviceaccount.com the roles BigQuery Data Editor');
    await form.getByTestId('advanced-settings').locator('summary').click();
    await form.getByLabel('API address (emulators and private endpoints)', { exact: true }).fill(bigquery.url);
    await form.getByRole('button', { name: 'Test', exact: true }).click();
    const outcome = form.getByTestId('settings-test');
    await outcome.getByText('Google refused the key of deleted-key@shop-analytics.iam.gserviceaccount.com: it was deleted or disabled').waitFor();
    // The message's page is a link.
    await expect(outcome.getByRole('link').first().getAttribute('href')).resolves.toMatch(/^https:\/\/console\.cloud\.google\.com\/iam-admin\/serviceaccounts/);
    await shot('google-04-bigquery-refused');

    await form.getByLabel('…or paste the key').fill(JSON.stringify(known));
    await form.getByRole('button', { name: 'Test', exact: true }).click();
    await outcome.getByText('Test passed').waitFor();
    await form.getByRole('button', { name: 'Add destination' }).click();
    await page.getByTestId('destination-bigquery').waitFor();
    const saved = (await (await server.adminFetch(`/trackers/${TRACKER}/destinations`)).json()) as { destinations: Array<{ id: string; settings: Record<string, unknown> }> };
    expect(saved.destinations.find((d) => d.id === 'bigquery')!.settings).toEqual({ projectId: 'shop-analytics', dataset: 'tributary', endpoint: bigquery.url, credentials: '[redacted]' });
  });
});
