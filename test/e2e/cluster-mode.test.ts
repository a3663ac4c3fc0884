import { readFileSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { queryWarehouse } from '../../connectors/local';
import { TrackerStore } from '../../src/core/trackers/store';
import { generateToken } from '../../src/core/trackers/tokens';
import { TrackerSchema } from '../../src/core/trackers/types';
import { freePort } from '../helpers/redis-server';
import { tributaryProcesses, waitReady, type TributaryProcess } from '../helpers/tributary-process';
import { waitFor } from '../helpers/wait';

/**
 * Cluster mode: role `all` with API_PROCESSES=2. The primary does the once-per-host work and runs
 * the delivery workers; two children serve the port. Requests on new connections go to the
 * children in turn (node:cluster's round robin), so each child is reached by plain requests.
 */
jest.setTimeout(60_000);

const { prefix, dataDir, redis, spawn } = tributaryProcesses('cluster', { API_PROCESSES: '2', DELIVERY_DISCOVER_INTERVAL_MS: '100', SHUTDOWN_TIMEOUT_MS: '6000' });
const token = generateToken();
let proc: TributaryProcess;
let port: number;
/** Ids of every record answered 2xx, all of which must reach the warehouse. */
const accepted: string[] = [];

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request on its own connection (agent: false), or on `agent`'s keep-alive connections. */
function send(method: string, urlPath: string, { body, headers = {}, agent }: { body?: unknown; headers?: Record<string, string>; agent?: Agent } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { host: '127.0.0.1', port, method, path: urlPath, agent: agent ?? false, headers: { ...headers, ...(payload ? { 'Content-Type': 'application/json' } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        res.on('error', reject);
      },
    );
    // A connection the primary hands to a child at the instant it is killed is never answered.
    req.setTimeout(3000, () => req.destroy(new Error(`no answer to ${method} ${urlPath} within 3 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

const postEvent = (n: number, agent?: Agent) => send('POST', '/v3/event', { body: { _event: 'cluster', n }, headers: { Authorization: `Tracker ${token}` }, agent });

/** The pids that answer /healthz on `count` new connections; a connection that fails counts for none. */
async function healthzPids(count: number): Promise<Set<number>> {
  const pids = new Set<number>();
  for (let i = 0; i < count; i++) {
    try {
      const res = await send('GET', '/healthz');
      if (res.status === 200) pids.add((JSON.parse(res.body) as { pid: number }).pid);
    } catch {
      // a connection handed to the child that was just killed
    }
  }
  return pids;
}

function metric(text: string, line: string): number {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? 0 : Number(found.slice(line.length + 1));
}

async function eventIdsInWarehouse(): Promise<Set<string> | undefined> {
  try {
    const r = await queryWarehouse(path.join(dataDir, 'warehouse', 'shop.duckdb'), "select _id from events where _event = 'cluster'", { lockTimeoutMs: 2000 });
    return new Set(r.rows.map((row) => String(row[0])));
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  await new TrackerStore(redis, prefix).save(
    TrackerSchema.parse({ id: 'shop', name: 'Shop', tokens: [{ token }], destinations: [{ id: 'wh', type: 'local', settings: { releaseAfterIdleMs: 200 } }] }),
  );
  port = await freePort();
  proc = spawn('all', { PORT: String(port) });
  await waitReady(port, proc);
  await waitFor(async () => (await healthzPids(4)).size === 2, { timeoutMs: 20_000, intervalMs: 100, message: 'two API processes listening' });
});

test('two API processes answer in turn, neither of them the primary, both with the one admin token the primary made', async () => {
  const pids = await healthzPids(6);
  expect(pids.size).toBe(2);
  expect(pids.has(proc.child.pid!)).toBe(false);

  expect(proc.output().match(/Admin API token/g)).toHaveLength(1);
  const adminToken = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
  for (let i = 0; i < 4; i++) expect((await send('GET', '/admin/api/trackers', { headers: { Authorization: `Bearer ${adminToken}` } })).status).toBe(200);
});

test('/metrics sums the requests and records of both API processes', async () => {
  const before = (await send('GET', '/metrics')).body;
  const answers = await Promise.all(Array.from({ length: 10 }, (_, n) => postEvent(n)));
  for (const a of answers) {
    expect(a.status).toBe(202);
    accepted.push((JSON.parse(a.body) as { id: string }).id);
  }
  // Scraped once through each API process: each answers for the whole host.
  for (let i = 0; i < 2; i++) {
    const res = await send('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(metric(res.body, 'tributary_http_requests_total{endpoint="/v3/event",method="POST",status="202"}') - metric(before, 'tributary_http_requests_total{endpoint="/v3/event",method="POST",status="202"}')).toBe(10);
    expect(metric(res.body, 'tributary_records_accepted_total{kind="event"}')).toBe(10);
  }
});

test('an API process killed with SIGKILL is replaced, and service continues', async () => {
  const [victim] = [...(await healthzPids(2))];
  process.kill(victim!, 'SIGKILL');
  const pids = await waitFor(
    async () => {
      const now = await healthzPids(4);
      return now.size === 2 && !now.has(victim!) ? now : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 100, message: 'a replacement API process' },
  );
  expect(pids.has(proc.child.pid!)).toBe(false);
  expect(proc.output()).toContain('API process died; forking a replacement');

  const answers = await Promise.all(Array.from({ length: 10 }, (_, n) => postEvent(100 + n)));
  for (const a of answers) {
    expect(a.status).toBe(202);
    accepted.push((JSON.parse(a.body) as { id: string }).id);
  }
});

test("records reach the warehouse through the primary's delivery workers", async () => {
  await waitFor(async () => {
    const ids = await eventIdsInWarehouse();
    return ids !== undefined && accepted.every((id) => ids.has(id));
  }, { timeoutMs: 20_000, intervalMs: 200, message: `${accepted.length} events in the warehouse` });
});

test('SIGTERM to the primary: the API processes flush, it exits 0, and every 2xx record is kept', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  let stopped = false;
  let sent = 0;
  const sender = async (): Promise<void> => {
    while (!stopped) {
      let res: Answer;
      try {
        res = await postEvent(1000 + sent++, agent);
      } catch {
        return; // the server is gone
      }
      if (res.status !== 202) {
        expect(res.status).toBe(503);
        return;
      }
      accepted.push((JSON.parse(res.body) as { id: string }).id);
    }
  };
  const acceptedBefore = accepted.length;
  const senders = Array.from({ length: 8 }, sender);
  await waitFor(() => accepted.length >= acceptedBefore + 50, { message: 'requests under way' });
  proc.child.kill('SIGTERM');
  expect(await proc.exited).toBe(0);
  stopped = true;
  await Promise.all(senders);
  agent.destroy();

  // What the stopped primary had not delivered yet is in Redis: a worker started now delivers it all.
  const worker = spawn('worker', { PORT: String(port) });
  await waitFor(async () => {
    const ids = await eventIdsInWarehouse();
    return ids !== undefined && accepted.every((id) => ids.has(id));
  }, { timeoutMs: 30_000, intervalMs: 200, message: `all ${accepted.length} accepted events in the warehouse` });
  expect(await worker.stop('SIGTERM')).toBe(0);
});
