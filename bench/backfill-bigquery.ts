import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BigQuery } from '@google-cloud/bigquery';
import { PassThroughClient } from 'google-auth-library';
import { bigqueryConnector } from '../connectors/bigquery';
import { localConnector, queryWarehouse } from '../connectors/local';
import { ConnectorRegistry } from '../connectors/registry';
import type { Connector } from '../connectors/types';
import { startWorkerRuntime } from '../jobs/worker-runtime';
import { openApiRuntime } from '../src/boot/api-runtime';
import { loadConfig } from '../src/core/config';
import { createLogger } from '../src/core/logger';
import { createMetrics } from '../src/core/metrics';
import { generateToken } from '../src/core/trackers/tokens';
import { TrackerSchema } from '../src/core/trackers/types';
import { DeliveryAdmin } from '../src/operator/delivery-admin';
import { DestinationService } from '../src/operator/destination-service';
import { startBigQueryFake } from '../test/fakes/bigquery';
import { deletePrefix } from '../test/helpers/redis';
import { makeEvents } from './events';
import { fmt } from './format';

/**
 * `npm run bench:backfill [-- --records 100000 --latency 500]`
 *
 * A backfill of archived events into BigQuery (the fake, in a child process, with Google's limits),
 * two ways in one run: the way before load jobs (history batches of 250, each looked up with a
 * query and sent with insertAll) and by load jobs (connectors/bigquery/load-events.ts). The API and
 * the worker run here; events are posted once, delivered to a local warehouse and archived, then
 * each way backfills a destination of its own. Prints records a second (from the backfill's start
 * to the last row delivered) and BigQuery API calls per 100 000 records, and checks every event is
 * in the table once.
 */
const { values: args } = parseArgs({ options: { records: { type: 'string' }, latency: { type: 'string' }, 'serve-fake': { type: 'boolean' } } });
const RECORDS = Number(args.records ?? process.env.BENCH_RECORDS ?? 100_000);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PROJECT = 'bench-project';
/**
 * How long the fake takes to answer a query and to run a load job: BigQuery answers even a small
 * query in 0.5–2 s, and loads 10 000 rows in 1–3 s. 0 for an instant fake.
 */
const LATENCY_MS = Number(args.latency ?? process.env.BENCH_BIGQUERY_LATENCY_MS ?? 500);
type Calls = Record<string, number>;

if (args['serve-fake']) {
  void (async () => {
    const fake = await startBigQueryFake({ queryLatencyMs: LATENCY_MS, loadJobMs: 2 * LATENCY_MS });
    process.on('message', (msg: { type: string }) => {
      if (msg.type === 'calls') process.send!({ type: 'calls', calls: { ...fake.calls } });
      if (msg.type === 'stop') void fake.close().then(() => process.exit(0));
    });
    process.send!({ type: 'listening', url: fake.url });
  })();
} else {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}

function ask<T>(child: ChildProcess, reply: string, send?: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (msg: { type: string }) => {
      if (msg.type !== reply) return;
      child.off('message', on);
      resolve(msg as T);
    };
    child.on('message', on);
    if (send) child.send({ type: send });
  });
}

/** The connector as it was before load jobs: history in batches of 250, each a look-up and insertAll. */
const streaming: Connector = {
  ...(bigqueryConnector as Connector),
  type: 'bigquery-streaming',
  historyBatchRecords: undefined,
  async open(ctx) {
    const writer = await bigqueryConnector.open(ctx as Parameters<typeof bigqueryConnector.open>[0]);
    return { ...writer, write: (records, signal, options) => writer.write(records, signal, { resend: options?.resend ?? false }) };
  },
};

const sum = (calls: Calls) => Object.values(calls).reduce((a, b) => a + b, 0);
const diff = (a: Calls, b: Calls): Calls => Object.fromEntries(Object.keys(b).map((k) => [k, (b[k] ?? 0) - (a[k] ?? 0)]).filter(([, n]) => (n as number) > 0));

async function main(): Promise<void> {
  const fake = fork(__filename, ['--serve-fake', '--latency', String(LATENCY_MS)], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { url } = await ask<{ url: string }>(fake, 'listening');
  const calls = async () => (await ask<{ calls: Calls }>(fake, 'calls', 'calls')).calls;
  const prefix = `bench-backfill-${Date.now().toString(36)}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tributary-bench-backfill-'));
  const config = loadConfig({ REDIS_PREFIX: prefix, LOG_LEVEL: 'warn', DATA_DIR: dataDir, DELIVERY_DISCOVER_INTERVAL_MS: '100' });
  const registry = new ConnectorRegistry([localConnector, bigqueryConnector, streaming] as Connector[]);
  const api = await openApiRuntime(config, REDIS_URL, createLogger('warn'), { metrics: createMetrics(false) });
  const worker = await startWorkerRuntime(config, REDIS_URL, registry, createLogger('warn'), { discoverIntervalMs: 100 });
  const server = createServer(api.app.callback()).listen(0, '127.0.0.1');
  const client = new BigQuery({ projectId: PROJECT, apiEndpoint: url, authClient: new PassThroughClient(), autoRetry: false, maxRetries: 0 });
  console.log(`# bench:backfill  ${new Date().toISOString()}`);
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}; node ${process.version}; ${fmt(RECORDS)} archived events of ~300 bytes (11 properties); BigQuery fake in a child process, answering queries in ${fmt(LATENCY_MS)} ms and running loads for ${fmt(2 * LATENCY_MS)} ms`);
  try {
    await new Promise((r) => server.once('listening', r));
    const token = generateToken();
    await api.store.save(TrackerSchema.parse({ id: 'bench', name: 'bench', tokens: [{ token }], destinations: [{ id: 'wh', type: 'local', settings: {} }] }));
    const since = new Date(Date.now() - 1000);
    const events = makeEvents(RECORDS, 11);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (let i = 0; i < events.length; i += 500) {
      const res = await fetch(`${base}/v3/event`, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(events.slice(i, i + 500)) });
      if (res.status !== 202) throw new Error(`POST /v3/event: ${res.status} ${await res.text()}`);
    }
    const file = path.join(dataDir, 'warehouse', 'bench.duckdb');
    for (;;) {
      const n = await queryWarehouse(file, 'SELECT count(*) FROM events').then((r) => Number(r.rows[0]![0]), () => 0);
      if (n >= RECORDS) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const until = new Date();
    const destinations = new DestinationService(api.store, registry, dataDir, createLogger('warn'));
    const admin = new DeliveryAdmin({ destinations, trackers: api.store, redis: api.redis, keyspace: config.keyspace, dataDir });

    const runs: Array<{ label: string; rate: number; per100k: number }> = [];
    for (const [label, type] of [
      ['before: batches of 250, look-up + insertAll', 'bigquery-streaming'],
      ['load jobs: chunks of 20 000, one load + one statement', 'bigquery'],
    ] as const) {
      const dataset = `backfill_${type.replace(/-/g, '_')}`;
      await destinations.add('bench', { type, id: dataset.replace(/_/g, '-'), settings: { projectId: PROJECT, dataset, endpoint: url } });
      const before = await calls();
      const t = performance.now();
      await admin.startBackfill('bench', dataset.replace(/_/g, '-'), { since, until, resources: ['events'] });
      for (;;) {
        const view = await admin.backfill('bench', dataset.replace(/_/g, '-'));
        if (view?.state === 'done' && view.waiting === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const seconds = (performance.now() - t) / 1000;
      const used = diff(before, await calls());
      const [[stored]] = (await client.query({ query: `SELECT count(*) AS n, count(DISTINCT _id) AS ids FROM \`${PROJECT}.${dataset}.events\`` })) as unknown as [Array<{ n: number; ids: number }>];
      const rate = RECORDS / seconds;
      const per100k = (sum(used) * 100_000) / RECORDS;
      runs.push({ label, rate, per100k });
      console.log(`${label.padEnd(56)} ${fmt(rate).padStart(7)} records/s  ${fmt(per100k, 1).padStart(7)} API calls / 100 000  (${fmt(seconds, 1)} s; ${Object.entries(used).map(([m, n]) => `${m} ${n}`).join(', ')})  stored ${fmt(stored!.n)}, ${fmt(stored!.ids)} distinct _id — ${stored!.n === RECORDS && stored!.ids === RECORDS ? 'ok' : 'MISMATCH'}`);
    }
    const [old, load] = runs;
    console.log(`ratio: ${fmt(load!.rate / old!.rate, 1)}× the records a second, ${fmt(load!.per100k / old!.per100k, 3)}× the API calls`);
    const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
    console.log(`goals: ≥ 5 000 records/s into the fake: ${met(load!.rate >= 5000)}; ≤ 50 API calls per 100 000 records: ${met(load!.per100k <= 50)}`);
  } finally {
    server.closeAllConnections();
    server.close();
    await worker.close();
    await api.close();
    fake.send({ type: 'stop' });
    await deletePrefix(prefix, REDIS_URL);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
