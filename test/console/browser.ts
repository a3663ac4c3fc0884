import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freePort } from '../helpers/ports';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { spawnTributary, waitReady, type TributaryProcess } from '../helpers/tributary-process';

const ROOT = path.join(__dirname, '..', '..');
/** Where the console tests put their screenshots. */
export const SHOTS = path.join(ROOT, 'test-artifacts', 'console');

/** Debian's Chromium, or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);

/** Headless, with nothing reaching out to Google's hosts (the machine's network is closed). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * `describe` where Chromium is installed or under CI (where a missing browser then fails the
 * suite); elsewhere `describe.skip`, saying so.
 */
export function browserSuite(name: string): jest.Describe {
  if (haveChromium || process.env.CI) return describe;
  console.warn(`${name} skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH). Under CI=1 this test fails instead.`);
  return describe.skip;
}

/** A full-page screenshot in SHOTS. */
export function shot(page: Page, name: string): Promise<Buffer> {
  return page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

export interface ConsoleServer {
  /** `http://127.0.0.1:<port>`, once started. */
  readonly base: string;
  readonly port: number;
  readonly proc: TributaryProcess | undefined;
  /** The server's Redis prefix, on the test Redis. */
  readonly prefix: string;
  /** The admin API at `base`, with the admin token. */
  adminFetch: (url: string, init?: RequestInit) => Promise<Response>;
  /** Checks that the console is built and Chromium is there, then starts the server and waits until it is ready. */
  start: (env?: Record<string, string>) => Promise<void>;
  /** Stops the server, deletes its Redis prefix and removes its data directory. */
  stop: () => Promise<void>;
}

/**
 * The server of a console test: `npm start`'s role (all) on a free port of 127.0.0.1, with the
 * test's own Redis prefix and data directory, `adminToken`, and its own address as PUBLIC_URL.
 */
export function consoleServer(name: string, adminToken: string): ConsoleServer {
  const prefix = uniquePrefix(name);
  const dataDir = mkdtempSync(path.join(tmpdir(), `tributary-${name}-`));
  let port = 0;
  let proc: TributaryProcess | undefined;
  const base = () => `http://127.0.0.1:${port}`;
  return {
    get base() {
      return base();
    },
    get port() {
      return port;
    },
    get proc() {
      return proc;
    },
    prefix,
    adminFetch: (url, init = {}) =>
      fetch(`${base()}/admin/api${url}`, { ...init, headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json', ...init.headers } }),
    start: async (env = {}) => {
      if (!existsSync(path.join(ROOT, 'dist', 'console', 'main.js'))) throw new Error('dist/console/main.js is missing: run `npm run build:console` first (`npm test` does).');
      if (!haveChromium) throw new Error(`No Chromium at ${CHROMIUM}: install it (apt-get install chromium) or set CHROMIUM_PATH.`);
      mkdirSync(SHOTS, { recursive: true });
      port = await freePort();
      proc = spawnTributary('all', { PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: base(), REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, DATA_DIR: dataDir, ADMIN_TOKEN: adminToken, ...env });
      await waitReady(port, proc, 60_000);
    },
    stop: async () => {
      await proc?.stop();
      await deletePrefix(prefix);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Collects the page's uncaught errors and console errors (a CSP violation among them) into
 * `problems`; a failed resource load is the server's answer, which the tests check themselves.
 */
export function watchProblems(page: Page, problems: string[]): void {
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/^Failed to load resource: the server responded with a status of \d+/.test(msg.text())) problems.push(`console error: ${msg.text()}`);
  });
}

/** Signs in to the console at `base` with the admin token and waits for the trackers list. */
export async function signIn(page: Page, base: string, adminToken: string): Promise<void> {
  await page.goto(`${base}/admin`);
  await page.getByLabel('Admin token').fill(adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Trackers' }).waitFor();
}
