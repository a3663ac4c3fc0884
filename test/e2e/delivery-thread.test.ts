import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { threadOptions } from '../../src/boot/delivery-thread';
import { TEST_REDIS_URL, deletePrefix, uniquePrefix } from '../helpers/redis';
import { freePort } from '../helpers/redis-server';
import { spawnTributary, waitReady } from '../helpers/tributary-process';
import { waitFor } from '../helpers/wait';
import { queryWarehouse } from '../../connectors/local';

test("the thread takes the process's loaders, not V8's heap flags (Node refuses them there): the young generation becomes its resource limit", () => {
  expect(threadOptions(['--max-semi-space-size=32', '--heap-growing-percent=100', '--import', 'tsx', '--enable-source-maps'])).toEqual({ execArgv: ['--import', 'tsx', '--enable-source-maps'], resourceLimits: { maxYoungGenerationSizeMb: 96 } });
  expect(threadOptions([])).toEqual({ execArgv: [] });
});

/**
 * `npm start` (role all) delivers from its delivery thread, and stops cleanly on SIGTERM with it;
 * DELIVERY_THREAD=false keeps the old way, on the API's loop. Both deliver every record.
 */
describe.each([
  ['in its delivery thread (the default)', {}, 'tributary workers delivering (delivery thread)'],
  ['on the API’s loop (DELIVERY_THREAD=false)', { DELIVERY_THREAD: 'false' }, 'tributary workers delivering'],
])('role all, delivery %s', (_name, env, logLine) => {
  test('records reach the local warehouse; SIGTERM stops the thread and the process with 0', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-thread-'));
    const prefix = uniquePrefix('thread');
    const port = await freePort();
    const proc = spawnTributary('all', { DATA_DIR: dataDir, PORT: String(port), REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, LOG_LEVEL: 'info', DELIVERY_DISCOVER_INTERVAL_MS: '100', ...env });
    try {
      await waitReady(port, proc);
      await waitFor(() => proc.output().includes(logLine));
      const token = /trk_[A-Za-z0-9_-]+/.exec(proc.output())![0];
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/v3/event`, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ _event: 'signup', _uid: `u${i}` }) });
        expect(res.status).toBe(202);
      }
      const file = path.join(dataDir, 'warehouse', 'demo.duckdb');
      await waitFor(async () => {
        const n = await queryWarehouse(file, "select count(*) from events where _event = 'signup'").then((r) => Number(r.rows[0]![0]), () => 0);
        return n === 20;
      }, { timeoutMs: 30_000, message: '20 events in the warehouse' });
      expect(await proc.stop('SIGTERM')).toBe(0);
      expect(proc.output()).toContain('"msg":"stopped"');
    } finally {
      await proc.stop('SIGKILL');
      await deletePrefix(prefix);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
