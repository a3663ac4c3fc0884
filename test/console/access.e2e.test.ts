import type { Browser, BrowserContext, Page } from 'playwright-core';
import { waitFor } from '../helpers/wait';
import { browserSuite, consoleServer, launchChromium, shot as screenshot, watchProblems } from './browser';

/**
 * People, roles and tokens in a real headless Chromium against a real server: the first admin is
 * named with the admin token on the sign-in page; a viewer of one tracker sees its health, charts
 * and integration and nothing to change or read records with; an editor of that tracker gets the
 * controls and still cannot see the other tracker; an admin invites a person who sets a password in
 * another browser; a personal token is shown once, works as a Bearer and stops when revoked.
 */

const ADMIN_TOKEN = 'access-e2e-admin-token-0123456789';
const ADMIN = { email: 'ada@example.com', password: 'a long enough admin passphrase' };
const VIEWER = { email: 'vera@example.com', password: 'lantern orchard 4471' };
const EDITOR = { email: 'edith@example.com', password: 'copper kettle 9931' };
const INVITED = { email: 'nora@example.com', password: 'quiet harbour 5580' };

/** What a viewer must never be offered: a control that changes something or opens records. */
const EDIT_CONTROL = /^(add|save|remove|rotate|disable|enable|edit|revoke|test|replay|discard|start|cancel backfill|create|run|pause)\b/i;

browserSuite('access e2e')('people, roles and tokens in the console', () => {
  jest.setTimeout(120_000);

  const server = consoleServer('access-e2e', ADMIN_TOKEN);
  const { adminFetch } = server;
  let base = '';
  let browser: Browser | undefined;
  let adminPage: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    await server.start({ TRAFFIC_FLUSH_MS: '200', DELIVERY_DISCOVER_INTERVAL_MS: '200' });
    base = server.base;
    // Set up with the admin token as a script would: two trackers, a destination and a webhook source on the first.
    for (const [id, name] of [
      ['alpha', 'Alpha'],
      ['beta', 'Beta'],
    ]) {
      expect((await adminFetch('/trackers', { method: 'POST', body: JSON.stringify({ id, name }) })).status).toBe(201);
    }
    expect((await adminFetch('/trackers/alpha/destinations', { method: 'POST', body: JSON.stringify({ type: 'local', id: 'warehouse' }) })).status).toBe(201);
    expect((await adminFetch('/trackers/alpha/sources', { method: 'POST', body: JSON.stringify({ type: 'github', id: 'gh' }) })).status).toBe(201);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server.stop();
  });

  afterEach(() => {
    const seen = problems.splice(0);
    expect(seen).toEqual([]);
  });

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const page = await context.newPage();
    watchProblems(page, problems);
    return { context, page };
  }

  async function signInAs(page: Page, who: { email: string; password: string }): Promise<void> {
    await page.goto(`${base}/admin`);
    await page.getByLabel('E-mail', { exact: true }).fill(who.email);
    await page.getByLabel('Password', { exact: true }).fill(who.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Trackers' }).waitFor();
  }

  const addPerson = async (person: { email: string; password: string }, trackers: Record<string, string>) =>
    expect((await adminFetch('/people', { method: 'POST', body: JSON.stringify({ ...person, role: 'member', trackers }) })).status).toBe(201);

  const tab = (page: Page, name: string) => page.getByRole('navigation', { name: 'Tracker sections' }).getByRole('link', { name, exact: true });
  // Browser-side code is passed as text: this file is type-checked without the DOM library.
  const buttonNames = (page: Page) => page.evaluate<string[]>("[...document.querySelectorAll('main button')].map((b) => (b.getAttribute('aria-label') || b.textContent || '').trim())");
  const formCount = (page: Page) => page.evaluate<number>("document.querySelectorAll('main form').length");
  const readClipboard = (page: Page) => page.evaluate<string>('navigator.clipboard.readText()');
  const fetchStatus = (page: Page, path: string) => page.evaluate<number>(`fetch(${JSON.stringify(path)}).then((r) => r.status)`);

  test('names the first admin with the admin token on the sign-in page of a fresh relay', async () => {
    ({ page: adminPage } = await newPage());
    await adminPage.goto(`${base}/admin`);
    const form = adminPage.getByRole('form', { name: 'Create the first admin' });
    await form.waitFor();
    await screenshot(adminPage, 'access-01-first-admin');
    await form.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await form.getByLabel('E-mail of the first admin').fill(ADMIN.email);
    await form.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await form.getByRole('button', { name: 'Create the first admin' }).click();

    await adminPage.getByRole('heading', { level: 1, name: 'Trackers' }).waitFor();
    await adminPage.getByRole('button', { name: `Account: ${ADMIN.email}` }).waitFor();
    const main = adminPage.getByRole('navigation', { name: 'Main' });
    for (const item of ['People', 'Audit', 'Unknown tokens', 'Tokens']) await main.getByRole('link', { name: item, exact: true }).waitFor();
    const people = (await (await adminFetch('/people')).json()) as { people: Array<{ email: string; role: string; hasPassword: boolean }> };
    expect(people.people).toEqual([expect.objectContaining({ email: ADMIN.email, role: 'admin', hasPassword: true })]);

    // Signed in with a person's password from now on: the default sign-in form is e-mail and password.
    const { context, page } = await newPage();
    await page.goto(`${base}/admin`);
    await page.getByRole('form', { name: 'Sign in with e-mail and password' }).waitFor();
    await page.getByRole('button', { name: 'Use the admin token (break-glass)' }).waitFor();
    await context.close();
  });

  test('a viewer of Alpha sees its health, charts and integration, nothing to change and no records; Beta is not there', async () => {
    await addPerson(VIEWER, { alpha: 'viewer' });
    const { context, page } = await newPage();
    await signInAs(page, VIEWER);

    await page.getByRole('row').filter({ hasText: 'alpha' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'beta' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Create a tracker' }).count()).toBe(0);
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const item of ['People', 'Audit', 'Unknown tokens']) expect(await nav.getByRole('link', { name: item, exact: true }).count()).toBe(0);

    const visit = async (hash: string, ready: () => Promise<void>, name: string) => {
      await page.goto(`${base}/admin/#/trackers/alpha/${hash}`);
      await ready();
      const offered = (await buttonNames(page)).filter((n) => EDIT_CONTROL.test(n));
      expect({ page: hash, offered }).toEqual({ page: hash, offered: [] });
      expect({ page: hash, forms: await formCount(page) }).toEqual({ page: hash, forms: 0 });
      await screenshot(page, `access-02-viewer-${name}`);
    };
    await visit('health', () => page.getByTestId('health-table').getByText('warehouse').waitFor(), 'health');
    await page.getByTestId('redis-memory').waitFor();
    await visit('traffic', () => page.locator('[data-testid="traffic-chart"][data-rendered="true"]').waitFor(), 'traffic');
    await visit('integration', () => page.getByRole('button', { name: 'Copy pixel URL for event' }).waitFor(), 'integration');
    await visit('settings', () => page.getByText('You are a viewer of this tracker').waitFor(), 'settings');
    await visit('destinations', () => page.getByTestId('destination-warehouse').waitFor(), 'destinations');
    await visit('destinations/warehouse', () => page.locator('[data-testid="delivered-chart"][data-rendered="true"]').waitFor(), 'destination');
    await visit('sources', () => page.getByTestId('sources-table').waitFor(), 'sources');
    await visit('sources/gh', () => page.getByTestId('secret-hidden').waitFor(), 'source');
    expect(await page.getByTestId('source-deliveries').count()).toBe(0);

    const tabs = page.getByRole('navigation', { name: 'Tracker sections' });
    for (const name of ['Health', 'Traffic', 'Integration', 'Destinations']) await tabs.getByRole('link', { name, exact: true }).waitFor();
    for (const name of ['Live', 'History', 'Warehouse', 'Audit']) expect(await tabs.getByRole('link', { name, exact: true }).count()).toBe(0);

    // A tab typed into the address bar says why it is not shown, and the API refuses it anyway.
    await page.goto(`${base}/admin/#/trackers/alpha/live`);
    await page.getByTestId('no-access').getByText('editors only').waitFor();
    expect(await fetchStatus(page, '/admin/api/trackers/alpha/requests')).toBe(403);

    await page.goto(`${base}/admin/#/trackers/beta/settings`);
    await page.getByTestId('no-access').getByText('No access').waitFor();
    expect(await fetchStatus(page, '/admin/api/trackers/beta')).toBe(403);
    await screenshot(page, 'access-03-viewer-no-access');
    await context.close();
  });

  test('an editor of Alpha gets the controls on Alpha and still cannot see Beta', async () => {
    await addPerson(EDITOR, { alpha: 'editor' });
    const { context, page } = await newPage();
    await signInAs(page, EDITOR);
    await page.getByRole('row').filter({ hasText: 'alpha' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'beta' }).count()).toBe(0);

    await page.goto(`${base}/admin/#/trackers/alpha/settings`);
    await page.getByRole('button', { name: 'Save settings' }).waitFor();
    await page.getByRole('button', { name: 'Add rule' }).waitFor();
    await tab(page, 'Destinations').click();
    await page.getByRole('button', { name: 'Edit warehouse' }).waitFor();
    await page.getByRole('button', { name: 'Remove warehouse' }).waitFor();
    await page.getByRole('button', { name: 'Add destination' }).waitFor();
    for (const name of ['Live', 'History', 'Warehouse']) await tab(page, name).waitFor();

    // The tracker's own audit log: what was done to Alpha (its creation, with the admin token).
    await tab(page, 'Audit').click();
    await page.getByTestId('audit-entry').filter({ hasText: 'POST /trackers/:id/destinations' }).first().waitFor();
    await screenshot(page, 'access-04-editor-audit');

    await page.goto(`${base}/admin/#/trackers/beta/destinations`);
    await page.getByTestId('no-access').waitFor();
    expect(await fetchStatus(page, '/admin/api/trackers/beta/destinations')).toBe(403);
    await context.close();
  });

  test('an admin adds a person, who opens the invitation in another browser, sets a password and is signed in', async () => {
    const page = adminPage;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'People', exact: true }).click();
    const form = page.getByRole('form', { name: 'Add a person' });
    await form.getByRole('textbox', { name: 'E-mail', exact: true }).fill(INVITED.email);
    await form.getByLabel('Name (optional)').fill('Nora');
    await form.getByLabel('Role', { exact: true }).selectOption('member');
    await form.getByLabel('Role on Alpha').selectOption('viewer');
    await form.getByRole('button', { name: 'Add person' }).click();

    await page.getByTestId('invitation').waitFor();
    await page.getByRole('button', { name: `Copy the invitation link of ${INVITED.email}` }).click();
    const link = await readClipboard(page);
    expect(link).toMatch(new RegExp(`^${base.replace(/[.]/g, '\\.')}/admin/#/welcome/[A-Za-z0-9_-]{20,}$`));
    const person = page.getByTestId(`person-${INVITED.email}`);
    await person.getByTestId('password-state').getByText('invited').waitFor();
    await screenshot(page, 'access-05-invited');

    const other = await newPage();
    await other.page.goto(link);
    await other.page.getByTestId('welcome-email').getByText(INVITED.email).waitFor();
    await other.page.getByLabel('New password').fill(INVITED.password);
    await other.page.getByLabel('Repeat the password').fill(INVITED.password);
    await other.page.getByRole('button', { name: 'Set password and sign in' }).click();
    await other.page.getByRole('heading', { level: 1, name: 'Trackers' }).waitFor();
    await other.page.getByRole('button', { name: `Account: ${INVITED.email}` }).waitFor();
    await other.page.getByRole('row').filter({ hasText: 'alpha' }).waitFor();
    await other.context.close();

    // The People page reads the list again every few seconds.
    await person.getByTestId('password-state').getByText('password set').waitFor({ timeout: 15_000 });

    // A change of grants, then a refusal shown where it happened: the last admin cannot go.
    await person.getByRole('button', { name: `Edit ${INVITED.email}` }).click();
    await person.getByLabel('Role on Alpha').selectOption('editor');
    await person.getByLabel('Name (optional)').fill('Nora Nguyen');
    await person.getByRole('button', { name: 'Save' }).click();
    await person.getByRole('status').filter({ hasText: `${INVITED.email} saved.` }).waitFor();
    await person.getByText('alpha: editor').waitFor();
    await person.getByRole('heading', { level: 3 }).getByText('Nora Nguyen').waitFor();
    // An e-mail that is someone else's is refused where it was typed, and nothing changes.
    await person.getByRole('button', { name: `Edit ${INVITED.email}` }).click();
    await person.getByLabel('E-mail').fill(ADMIN.email);
    await person.getByRole('button', { name: 'Save' }).click();
    await person.getByRole('alert').getByText(`${ADMIN.email} is already someone's e-mail.`).waitFor();
    await person.getByRole('button', { name: 'Cancel' }).click();

    const me = page.getByTestId(`person-${ADMIN.email}`);
    await me.getByRole('button', { name: `Remove ${ADMIN.email}` }).click();
    await me.getByRole('button', { name: `Remove ${ADMIN.email} for good` }).click();
    await me.getByRole('alert').getByText(/last admin/).waitFor();
    await screenshot(page, 'access-06-people');
  });

  test('the audit log shows who changed what, before and after, and can be filtered', async () => {
    const page = adminPage;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit', exact: true }).click();
    const entries = page.getByTestId('audit-entry');
    await entries.first().waitFor();
    await entries.filter({ hasText: 'PATCH /people/:person' }).filter({ hasText: 'trackers.alpha: viewer → editor' }).waitFor();

    const filters = page.getByRole('form', { name: 'Filter the audit log' });
    await filters.getByLabel('Outcome').selectOption('refused');
    await filters.getByLabel('Actor').fill(EDITOR.email);
    await filters.getByRole('button', { name: 'Show' }).click();
    const refusal = entries.filter({ hasText: 'GET /trackers/:id/destinations' }).filter({ hasText: 'no role on tracker beta' });
    const others = page.locator('[data-testid="audit-entry"]:not([data-outcome="refused"])');
    await waitFor(async () => (await refusal.count()) === 1 && (await others.count()) === 0, { message: 'only the refusals of the editor' });
    expect(await entries.filter({ hasNotText: EDITOR.email }).count()).toBe(0);
    await page.getByRole('link', { name: 'Export (JSON lines)' }).waitFor();
    await screenshot(page, 'access-07-audit');
  });

  test('a personal token is shown once, works as a Bearer, and stops when revoked from the page', async () => {
    const { context, page } = await newPage();
    await signInAs(page, EDITOR);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tokens', exact: true }).click();
    const form = page.getByRole('form', { name: 'Make a personal token' });
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('nightly export');
    // An editor may give read, write and payloads, never admin.
    expect(await form.getByRole('checkbox', { name: /^admin/ }).count()).toBe(0);
    await form.getByRole('button', { name: 'Make token' }).click();

    const shown = page.getByTestId('new-token');
    await shown.waitFor();
    const token = (await shown.locator('code.copy-value').textContent()) ?? '';
    expect(token).toMatch(/^tbp_[A-Za-z0-9]{10}_[A-Za-z0-9_-]{43}$/);
    const prefix = token.split('_').slice(0, 2).join('_');
    await page.getByTestId(`token-${prefix}`).getByText('active').waitFor();

    const bearer = () => fetch(`${base}/admin/api/trackers`, { headers: { Authorization: `Bearer ${token}` } });
    const ok = await bearer();
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { trackers: Array<{ id: string }> }).trackers.map((t) => t.id)).toEqual(['alpha']);

    await page.reload();
    await page.getByTestId(`token-${prefix}`).waitFor();
    expect(await page.getByTestId('new-token').count()).toBe(0);
    expect(await page.content()).not.toContain(token);

    await page.getByRole('button', { name: 'Revoke nightly export' }).click();
    await page.getByRole('button', { name: `Revoke ${prefix}` }).click();
    await page.getByTestId(`token-${prefix}`).getByText('revoked').waitFor();
    expect((await bearer()).status).toBe(401);
    await screenshot(page, 'access-08-tokens');
    await context.close();
  });
});
