import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Warehouse } from '../../../connectors/local/database';
import { defaultEngineLimits } from '../../../connectors/local/engine';

/**
 * A write the delivery loop gives up on (its deadline passed, or the process stops) must not keep
 * the warehouse file taken: its query is interrupted, so the next batch gets the file at once
 * rather than after the abandoned query ends by itself.
 */

/** One thread sums about 10^8 hashes a second here: this runs for minutes unless interrupted. */
const ENDLESS = 'SELECT sum(hash(i)) FROM range(20000000000) t(i)';

let dir: string;
let warehouse: Warehouse;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tributary-abandon-'));
  warehouse = Warehouse.acquire(path.join(dir, 'w.duckdb'), 60_000, defaultEngineLimits(dir));
});
afterEach(async () => {
  await warehouse.release();
  await rm(dir, { recursive: true, force: true });
});

/** `p`'s outcome, or 'still waiting' after `ms`. */
const within = <T>(p: Promise<T>, ms: number): Promise<T | 'still waiting'> => Promise.race([p, new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), ms).unref())]);

test('a query whose signal aborts is interrupted, and the next use of the file runs at once', async () => {
  const abandon = new AbortController();
  const running = warehouse.use(abandon.signal, (conn) => conn.run(ENDLESS)).catch((err: unknown) => err);
  const next = warehouse.use(undefined, async (conn) => (await conn.runAndReadAll('SELECT 42 AS answer')).getRowObjects());
  await new Promise((resolve) => setTimeout(resolve, 300));
  abandon.abort(new Error('deadline passed'));

  expect(await running).toEqual(new Error('deadline passed'));
  expect(await within(next, 5000)).toEqual([{ answer: 42 }]);
});
