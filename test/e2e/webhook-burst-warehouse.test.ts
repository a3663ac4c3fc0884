import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { localConnector, queryWarehouse } from '../../connectors/local';
import { PermanentError } from '../../connectors/errors';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { DeadLetterStore } from '../../jobs/delivery/dead-letters';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { parseExactJson } from '../../src/core/records/exact-json';
import type { Properties, TrackedRecord } from '../../src/core/records/types';
import { SourceService } from '../../src/operator/source-service';
import { startTestApi, type TestApi } from '../helpers/api';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { BURST_SOURCES, burstDeliveries, signedHeaders, type BurstDelivery } from '../helpers/webhook-burst';

/**
 * Bursts of real webhook payloads (about 240 columns between them, most JSON) into the local
 * warehouse under the default memory limit (WAREHOUSE_MEMORY_MB 128): a commit of such a table
 * runs out of memory, and the writer must grow its limit, write the batch again on the file opened
 * afresh, and store every delivery once, dead-lettering none.
 */
jest.setTimeout(240_000);
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-burst-'));
let api: TestApi;
let worker: WorkerRuntime;
let server: Server;
let base: string;

const DEST = 'wh';
const file = () => path.join(dataDir, 'warehouse', `${api.tracker.id}.duckdb`);
const deadLetters = () => new DeadLetterStore(api.runtime.redis, deliveryKeys(api.prefix, { trackerId: api.tracker.id, destinationId: DEST }));

beforeAll(async () => {
  api = await startTestApi({ DATA_DIR: dataDir }, { destinations: [{ id: DEST, type: 'local', enabled: true, settings: {} }] });
  expect(api.config.warehouse.memoryMb).toBe(128);
  const sources = new SourceService(api.runtime.store);
  for (const s of BURST_SOURCES) await sources.add(api.tracker.id, { id: s.id, type: s.type, secret: s.secret, ...(s.hmac ? { hmac: s.hmac } : {}) });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([localConnector as Connector]), createLogger('silent'), {
    discoverIntervalMs: 50,
    delivery: { backoff: { baseMs: 50, maxMs: 200 }, maxRecordAttempts: 10, configRecheckMs: 200, pollMs: 100, writeTimeoutMs: 60_000 },
  });
  server = createServer(api.runtime.app.callback()).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await worker.close();
  await api.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Sends every delivery, `inFlight` at a time; each must be answered 200. */
async function send(deliveries: readonly BurstDelivery[], inFlight = 8): Promise<void> {
  let next = 0;
  const refused: string[] = [];
  const lane = async () => {
    while (next < deliveries.length) {
      const d = deliveries[next++]!;
      const res = await fetch(`${base}/v3/webhooks/${api.tracker.id}/${d.source}`, { method: 'POST', headers: { 'Content-Type': d.contentType, ...signedHeaders(d) }, body: d.body });
      if (res.status !== 200) refused.push(`${d.source} ${res.status} ${await res.text()}`);
      else await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  expect(refused).toEqual([]);
}

async function storedCount(): Promise<number | undefined> {
  try {
    const r = await queryWarehouse(file(), 'SELECT count(*), count(DISTINCT _id) FROM events');
    const [all, distinct] = r.rows[0]!.map(Number);
    expect(all).toBe(distinct);
    return all;
  } catch {
    return undefined;
  }
}

async function waitStored(total: number): Promise<void> {
  await waitFor(async () => ((await storedCount()) === total || (await deadLetters().count()) > 0 ? true : undefined), { timeoutMs: 180_000, intervalMs: 500, message: `${total} events in the warehouse` });
  expect(await deadLetters().count()).toBe(0);
  expect(await storedCount()).toBe(total);
}

test('a burst of 1 310 real payloads, then one three times its size, are stored once each and none is dead-lettered', async () => {
  const burst = burstDeliveries();
  expect(burst).toHaveLength(1310);
  await send(burst);
  await waitStored(1310);

  const columns = await queryWarehouse(file(), "SELECT count(*) FROM duckdb_columns() WHERE table_name = 'events'");
  expect(Number(columns.rows[0]![0])).toBeGreaterThan(200);
  // Exact integers beyond 2^53 stay exact through the wide write.
  const order = burst.find((d) => d.source === 'shopify')!;
  const stored = await queryWarehouse(file(), `SELECT _properties::VARCHAR FROM events WHERE _id = '${order.headers['X-Shopify-Webhook-Id']}'`);
  expect((parseExactJson(String(stored.rows[0]![0])) as Properties).id).toEqual((parseExactJson(order.body) as Properties).id);

  await send([1, 2, 3].flatMap((copy) => burstDeliveries(copy)));
  await waitStored(1310 * 4);
});

test('dead letters left by a warehouse that called unstored records duplicates are stored once by dlq replay', async () => {
  const before = (await storedCount())!;
  // As the writer before this fix dead-lettered them: records that were never stored, refused as
  // "duplicates" after a commit that ran out of memory; and one that was stored after all.
  const t = new Date().toISOString();
  const lost: TrackedRecord[] = burstDeliveries(9)
    .slice(0, 40)
    .map((d) => ({ kind: 'event', id: d.headers['X-GitHub-Delivery']!, receivedAt: t, eventAt: t, event: `github.${d.headers['X-GitHub-Event']}`, properties: parseExactJson(d.body) as Properties }));
  const storedId = String((await queryWarehouse(file(), 'SELECT _id FROM events LIMIT 1')).rows[0]![0]);
  const already: TrackedRecord = { kind: 'event', id: storedId, receivedAt: t, eventAt: t, event: 'github.push', properties: parseExactJson('{"again":true}') as Properties };
  const refusedAsDuplicate = (r: TrackedRecord) => new PermanentError(`the local warehouse refused this record: Constraint Error: Duplicate key "_id: ${r.id}" violates primary key constraint.`);
  await deadLetters().add([...lost, already].map((record) => ({ record, error: refusedAsDuplicate(record) })));

  // What an operator runs: tributary dlq replay <tracker> <destination>.
  expect(await deadLetters().replay()).toBe(41);
  await waitStored(before + 40);
  const again = await queryWarehouse(file(), `SELECT count(*) FROM events WHERE _properties::VARCHAR LIKE '%"again"%'`);
  expect(Number(again.rows[0]![0])).toBe(0);
});
