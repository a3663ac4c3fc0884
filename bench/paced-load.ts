import { Pool } from 'undici';
import { failToParent, tellParent, type Message } from './child';
import { batchBodies, keyedBatchBodies, REQUEST_ID, singleBodies } from './events';
import { percentile } from './format';

/**
 * An evenly paced load: request i is due at start + i / rate, whatever happened to the ones
 * before, and its latency counts from when it was due (a late send is the server's delay too).
 * autocannon's fixed-rate mode sends each connection's share of a second in one burst, which
 * puts even a bare Koa server's p99 at tens of milliseconds; this one spreads them.
 */
export interface PacedPlan {
  url: string;
  path: string;
  /** Requests a second. */
  rate: number;
  seconds: number;
  /** Keep-alive connections; a request due while all are busy waits for one. */
  connections: number;
  /** 1: one event object a body; more: arrays of that many. */
  recordsPerRequest: number;
  seed: number;
  authorization?: string;
  /** A header that carries a key of its own on every request (e.g. `idempotency-key`). */
  keyHeader?: string;
  /**
   * Arrays as v3 takes them (default), or keyed events (a unique `_id` each) as v3 arrays or as
   * Segment batches (`/v1/batch`): see keyedBatchBodies.
   */
  format?: 'v3' | 'v3-keyed' | 'segment';
}

export interface PacedResult {
  sent: number;
  ok: number;
  failed: number;
  p50: number;
  p99: number;
  max: number;
  /** Requests a second actually completed over the run. */
  rate: number;
}

/** Distinct bodies cycled through. */
const POOL = 256;
/** How often the pacer wakes to send what has come due (ms). */
const TICK_MS = 1;

async function run(plan: PacedPlan): Promise<PacedResult> {
  const keyed = plan.format === 'v3-keyed' || plan.format === 'segment';
  const bodies = plan.recordsPerRequest === 1 ? singleBodies(POOL, plan.seed) : keyed ? keyedBatchBodies(POOL / 8, plan.recordsPerRequest, plan.format === 'segment' ? 'segment' : 'v3', plan.seed) : batchBodies(POOL / 8, plan.recordsPerRequest, plan.seed);
  // Split once where each request's own id goes.
  const parts = bodies.map((b) => b.split(REQUEST_ID));
  const pool = new Pool(plan.url, { connections: plan.connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (plan.authorization) headers.authorization = plan.authorization;
  const keyBase = `${plan.seed}-${process.hrtime.bigint().toString(36)}-`;
  const total = Math.round(plan.rate * plan.seconds);
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  let sent = 0;
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  const send = (i: number): void => {
    const due = started + (i * 1000) / plan.rate;
    const h = plan.keyHeader ? { ...headers, [plan.keyHeader]: `${keyBase}${i.toString(36)}` } : headers;
    const p = pool
      .request({ method: 'POST', path: plan.path, headers: h, body: keyed ? parts[i % parts.length]!.join(`${keyBase}${i.toString(36)}`) : bodies[i % bodies.length]! })
      .then(async (res) => {
        await res.body.dump();
        if (res.statusCode >= 200 && res.statusCode < 300) ok++;
        else failed++;
      })
      .catch(() => void failed++)
      .finally(() => {
        latencies.push(performance.now() - due);
        inFlight.delete(p);
      });
    inFlight.add(p);
  };
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) * plan.rate) / 1000) + 1);
    while (sent < due) send(sent++);
    await new Promise((r) => setTimeout(r, TICK_MS));
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return { sent, ok, failed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? Number.NaN, rate: ok / elapsed };
}

process.on('message', (msg: Message) => {
  if (msg.type === 'run') {
    run(msg.plan as unknown as PacedPlan).then((result) => tellParent({ type: 'result', result: result as unknown as Message[string] }), failToParent);
  } else if (msg.type === 'stop') process.exit(0);
});
tellParent({ type: 'ready' });
