import type { Browser, Page } from 'playwright-core';
import { postgresConnector } from '../../connectors/postgres';
import { LEAST_RIGHTS_SQL } from '../../connectors/postgres/setup';
import { createLogger } from '../../src/core/logger';
import { freePort } from '../helpers/ports';
import { createTestDatabase, TEST_PG, type TestDatabase } from '../helpers/postgres';
import { browserSuite, consoleServer, launchChromium, shot as screenshot, signIn, watchProblems } from './browser';

/**
 * Adding a PostgreSQL destination from the console as a team would: the steps with the SQL of a
 * least-rights role, the connection string pasted as the provider gives it, Test before saving
 * answering an unknown host, a port where nothing listens, a refused login and a missing database
 * in the connector's own words, then the destination saved, listed, and shown split into its
 * settings with the password hidden; a connection string pasted in an edit replaces those parts.
 * Against the machine's PostgreSQL, in a database and role of the test's own.
 */

const ADMIN_TOKEN = 'postgres-setup-e2e-admin-token-0123456789';
const TRACKER = 'shop-eu';

/** What the connector's test says of these settings, said here by the same code the relay runs. */
async function connectorSays(url: string): Promise<string> {
  const settings = postgresConnector.settingsSchema.parse({ url });
  const writer = await postgresConnector.open({ trackerId: TRACKER, destinationId: 'postgres', settings, dataDir: '/nonexistent', logger: createLogger('silent'), now: () => new Date() });
  try {
    await writer.test(AbortSignal.timeout(20_000));
    return 'passed';
  } catch (err) {
    return (err as Error).message;
  } finally {
    await writer.close();
  }
}

browserSuite('postgres setup e2e')('connecting PostgreSQL from the console', () => {
  jest.setTimeout(120_000);

  const server = consoleServer('postgres-setup-e2e', ADMIN_TOKEN);
  let db: TestDatabase;
  let browser: Browser | undefined;
  let page: Page;
  const problems: string[] = [];
  const shot = (name: string) => screenshot(page, name);

  beforeAll(async () => {
    db = await createTestDatabase('console');
    await server.start();
    expect((await server.adminFetch('/trackers', { method: 'POST', body: JSON.stringify({ id: TRACKER, name: 'Shop EU' }) })).status).toBe(201);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    watchProblems(page, problems);
    await signIn(page, server.base, ADMIN_TOKEN);
  });

  afterAll(async () => {
    await browser?.close();
    await server.stop();
    await db?.drop();
  });

  afterEach(() => expect(problems.splice(0)).toEqual([]));

  test('pastes a connection string, is told what is wrong by Test, then tests, adds, and sees it split', async () => {
    const { host, port } = TEST_PG;
    const url = `postgres://${db.role}:s3cret-pw@${host}:${port}/${db.name}`;
    await page.goto(`${server.base}/admin#/trackers/${TRACKER}/destinations`);
    await page.getByRole('heading', { level: 2, name: 'Add a destination' }).waitFor();
    const form = page.getByTestId('add-destination-form');
    await form.getByRole('combobox', { name: 'Type', exact: true }).selectOption('postgres');

    // The steps first: the least-rights SQL as the docs give it, to copy.
    const steps = form.getByRole('list', { name: 'Before you start' });
    await expect(steps.getByRole('listitem').count()).resolves.toBe(3);
    await expect(steps.locator('code').first().textContent()).resolves.toBe(LEAST_RIGHTS_SQL);
    await steps.getByRole('button', { name: 'Copy the text of step 1' }).waitFor();
    // The connection string and the schema; host, user, password… under Advanced, closed.
    const advanced = form.getByTestId('advanced-settings');
    await expect(advanced.evaluate((d) => (d as { open: boolean }).open)).resolves.toBe(false);
    const connection = form.getByLabel('Connection string', { exact: true });
    await shot('postgres-01-steps');

    // Test before saving: each failure shown word for word as the connector's test() puts it.
    const outcome = form.getByTestId('settings-test');
    const cases = [
      // A host name that cannot exist (RFC 6761); a resolver that cannot be asked says so instead.
      { name: 'unknown host', url: `postgres://${db.role}@db.tributary-test.invalid:${port}/${db.name}`, says: /not known to DNS|cannot be reached \(EAI_AGAIN\)/ },
      { name: 'nothing listening', url: `postgres://${db.role}@127.0.0.1:${await freePort()}/${db.name}`, says: /cannot be reached \(ECONNREFUSED\)/ },
      { name: 'refused login', url: `postgres://nobody_${db.role}:pw@${host}:${port}/${db.name}`, says: /refused the login .*role "nobody_.*" does not exist/ },
      { name: 'missing database', url: `postgres://${db.role}@${host}:${port}/${db.name}_missing`, says: /database ".*_missing" does not exist/ },
    ];
    for (const c of cases) {
      const expected = await connectorSays(c.url);
      expect(expected).toMatch(c.says);
      await connection.fill(c.url);
      await form.getByRole('button', { name: 'Test', exact: true }).click();
      await outcome.getByText(expected, { exact: true }).waitFor();
      // Verbatim: the console adds nothing and leaves nothing out.
      await expect(outcome.textContent()).resolves.toBe(expected);
      await shot(`postgres-02-${c.name.replaceAll(' ', '-')}`);
    }
    // Nothing was saved by the tests.
    await expect(((await (await server.adminFetch(`/trackers/${TRACKER}/destinations`)).json()) as { destinations: unknown[] }).destinations).toEqual([]);

    await connection.fill(url);
    await form.getByRole('button', { name: 'Test', exact: true }).click();
    await outcome.getByText(`Test passed: the destination works with these settings. tables users, sessions and events ready in ${db.role}@${host}:${port}/${db.name}, schema shop_eu`).waitFor();
    await form.getByRole('button', { name: 'Add destination' }).click();
    const item = page.getByTestId('destination-postgres');
    await item.waitFor();
    await expect(item.getByRole('heading', { level: 3 }).textContent()).resolves.toBe('postgres postgres');

    // Stored split, the password a secret.
    const saved = (await (await server.adminFetch(`/trackers/${TRACKER}/destinations`)).json()) as { destinations: Array<{ id: string; settings: Record<string, unknown> }> };
    expect(saved.destinations.map((d) => [d.id, d.settings])).toEqual([['postgres', { host, port, database: db.name, user: db.role, password: '[redacted]' }]]);
    expect(JSON.stringify(saved)).not.toContain('s3cret-pw');

    // Edit shows the parts, the password as the marker that keeps it.
    await item.getByRole('button', { name: 'Edit postgres' }).click();
    const edit = page.getByTestId('edit-postgres-destination-form');
    await expect(edit.getByLabel('Connection string', { exact: true }).inputValue()).resolves.toBe('');
    await edit.getByTestId('advanced-settings').locator('summary').click();
    const value = (label: string) => edit.getByLabel(label, { exact: true }).inputValue();
    await expect(Promise.all(['host', 'port', 'database', 'user', 'password'].map(value))).resolves.toEqual([host, String(port), db.name, db.role, '[redacted]']);
    await shot('postgres-03-saved-split');
    // Saved as shown (the marker sent back keeps the stored password), it still works.
    await edit.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings of postgres saved.').waitFor();
    await edit.waitFor({ state: 'detached' });
    await item.getByRole('button', { name: 'Test connection of postgres' }).click();
    await page.getByTestId('test-result-postgres').getByText('Connection OK.').waitFor();

    // Another connection string pasted in an edit replaces the parts of the last one, password included.
    await item.getByRole('button', { name: 'Edit postgres' }).click();
    await edit.getByLabel('Connection string', { exact: true }).fill(`postgres://${db.role}@localhost:${port}/${db.name}`);
    await edit.getByRole('button', { name: 'Save settings' }).click();
    await edit.waitFor({ state: 'detached' });
    const edited = (await (await server.adminFetch(`/trackers/${TRACKER}/destinations`)).json()) as { destinations: Array<{ settings: Record<string, unknown> }> };
    expect(edited.destinations[0]!.settings).toEqual({ host: 'localhost', port, database: db.name, user: db.role });
  });
});
