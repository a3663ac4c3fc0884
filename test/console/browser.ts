import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium, or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);

/** Headless, with nothing reaching out to Google's hosts (the machine's network is closed). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
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
