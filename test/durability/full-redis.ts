import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type supertest from 'supertest';
import { localConnector } from '../../connectors/local';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { generateAdminToken } from '../../src/admin/admin-token';
import { createLogger } from '../../src/core/logger';
import { startTestApi, type TestApi } from '../helpers/api';
import { OwnRedis } from '../helpers/redis-server';
import { cliRunner, type CliResult } from '../cli/run-cli';
import { FAST_WORKER } from '../helpers/fast-worker';

/** No spilling to disk: these tests fill Redis with a destination's backlog on purpose (test/durability/spill-pressure.test.ts spills). */
const NO_SPILL = { capRecords: Number.MAX_SAFE_INTEGER, frameRecords: 5000, checkMs: 1000, underPressure: () => false };

export interface FullRedis {
  own: OwnRedis;
  api: TestApi;
  worker: WorkerRuntime;
  /** A plain connection to the test's Redis, for looking. */
  redis: Redis;
  dataDir: string;
  /** The CLI against this Redis and data directory, as an operator on call runs it. */
  tributary: (...args: string[]) => Promise<CliResult>;
  /** Exit 0, nothing on stderr; returns stdout. */
  succeeds: (...args: string[]) => Promise<string>;
  /**
   * `tributary query <tracker> <sql> --json`'s rows, or undefined while the tracker's local
   * warehouse does not exist yet (its first delivered batch makes it), for a test that waits.
   */
  warehouseRows: (trackerId: string, sql: string) => Promise<unknown[][] | undefined>;
  /** A request to the admin API (`/admin/api<url>`), as the console sends it. */
  admin: (method: 'get' | 'post' | 'patch' | 'delete', url: string, body?: object) => supertest.Test;
  /** 100 events of about 600 bytes each (480 of them random), as one request. */
  send: (n: number) => Promise<supertest.Response>;
  usedMemory: () => Promise<number>;
  ingestQueueEmpty: () => Promise<boolean>;
  close: () => Promise<void>;
}

/**
 * A redis-server of the test's own with `maxmemory` and noeviction, the API and the workers on it,
 * and a tracker whose only destination, `wh` (the local warehouse), is disabled: its records stay
 * in Redis until it is enabled (unless `spill`, which leaves the worker's spilling to disk on).
 */
export async function startFullRedis(maxmemory: number, env: Record<string, string> = {}, options: { spill?: boolean } = {}): Promise<FullRedis> {
  const own = await OwnRedis.start(['--maxmemory', String(maxmemory), '--maxmemory-policy', 'noeviction', '--appendfsync', 'no']);
  const redis = new Redis(own.url);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-memory-'));
  const registry = new ConnectorRegistry([localConnector as Connector]);
  const adminToken = generateAdminToken();
  const api = await startTestApi({ DATA_DIR: dataDir, REDIS_MEMORY_SAMPLE_MS: '100', ...env }, { destinations: [{ id: 'wh', type: 'local', enabled: false, settings: {} }] }, own.url, { token: adminToken, registry });
  const worker = await startWorkerRuntime(api.config, own.url, registry, createLogger('silent'), options.spill ? FAST_WORKER : { ...FAST_WORKER, spill: NO_SPILL });
  const cli = cliRunner(api.prefix);
  const tributary = (...args: string[]) => cli.run(args, { REDIS_URL: own.url, REDIS_PREFIX: api.prefix, DATA_DIR: dataDir });
  // Random padding: queued records are compressed (jobs/routing/stream-entries.ts), and these must fill Redis;
  // large, so that it takes few records (each costs the test CPU to accept, route and deliver).
  const batch = (n: number) => Array.from({ length: 100 }, (_, i) => ({ _event: 'page_view', page: `/catalog/item/${n}-${i}`, referrer: 'https://www.example.com/search?q=long+weekend', props: { plan: 'pro', n, i, pad: randomBytes(360).toString('base64') } }));
  return {
    own,
    api,
    worker,
    redis,
    dataDir,
    tributary,
    async succeeds(...args) {
      const r = await tributary(...args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
      return r.stdout;
    },
    async warehouseRows(trackerId, sql) {
      const r = await tributary('query', trackerId, sql, '--json');
      if (r.code === 1 && r.stderr.includes('nothing has been delivered to it yet')) return undefined;
      expect({ sql, code: r.code, stderr: r.stderr }).toEqual({ sql, code: 0, stderr: '' });
      return (JSON.parse(r.stdout) as { rows: unknown[][] }).rows;
    },
    admin: (method, url, body) => {
      const req = api.http[method](`/admin/api${url}`).set('Authorization', `Bearer ${adminToken}`);
      return body === undefined ? req : req.send(body);
    },
    send: (n) => api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send(batch(n)),
    usedMemory: async () => Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))![1]),
    ingestQueueEmpty: async () => (await redis.llen(`${api.prefix}:ingest:wait`)) === 0 && (await redis.llen(`${api.prefix}:ingest:active`)) === 0,
    async close() {
      await worker.close();
      await api.close().catch(() => undefined);
      redis.disconnect();
      await own.destroy();
      rmSync(dataDir, { recursive: true, force: true });
      cli.cleanup();
    },
  };
}
