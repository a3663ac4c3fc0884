/**
 * Throughput of the local connector: `npx tsx test/connectors/local/throughput.bench.ts [batches] [mode]`.
 * mode `keep` (default): the writer keeps the file open between batches, as in production.
 * mode `reopen`: the file is closed after every batch (idle release 0 ms), to show what opening
 * per batch would cost.
 * BENCH_RESEND=1 tells the writer that every batch may be stored already (as a retry does), so
 * events go in with `ON CONFLICT DO NOTHING` rather than the plain INSERT of a first delivery.
 * Prints the process's CPU a record (all threads: DuckDB works on its own).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localConnector } from '../../../connectors/local';
import { createLogger } from '../../../src/core/logger';
import type { Properties, TrackedRecord } from '../../../src/core/records/types';

const batches = Number(process.argv[2] ?? 100);
const mode = process.argv[3] ?? 'keep';
const kind = (process.argv[4] ?? 'event') as 'event' | 'user';
const BATCH = 1000;

let seq = 0;
function record(): TrackedRecord {
  const i = seq++;
  const at = new Date(1_767_000_000_000 + i).toISOString();
  const properties = Object.assign(Object.create(null) as Properties, {
    page: `/products/${i % 500}`,
    title: 'Product page',
    price: (i % 1000) + 0.99,
    quantity: i % 7,
    logged_in: i % 3 === 0,
    referrer: i % 5 === 0 ? null : 'https://example.com/',
    cart: { items: i % 4, skus: ['a', 'b'] },
  });
  const id = `01900000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`;
  if (kind === 'user') return { kind: 'user', id, receivedAt: at, uid: `u${i % 5000}`, properties };
  return { kind: 'event', id, receivedAt: at, eventAt: at, event: 'page_view', uid: `u${i % 5000}`, sid: `s${i % 20000}`, properties, context: { ip: '203.0.113.7', userAgent: 'bench' } };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tributary-bench-'));
  const writer = await localConnector.open({
    trackerId: 'bench',
    destinationId: 'local',
    settings: mode === 'reopen' ? { releaseAfterIdleMs: 0 } : {},
    dataDir,
    logger: createLogger('silent'),
    now: () => new Date(),
  });
  const signal = new AbortController().signal;
  let busyMs = 0;
  const perBatch: number[] = [];
  const options = { resend: process.env.BENCH_RESEND === '1' };
  const cpu0 = process.cpuUsage();
  for (let b = 0; b < batches; b++) {
    const records = Array.from({ length: BATCH }, record);
    const t0 = performance.now();
    const outcomes = await writer.write(records, signal, options);
    const ms = performance.now() - t0;
    if (outcomes.some((o) => o.status !== 'ok')) throw new Error('a record failed');
    busyMs += ms;
    perBatch.push(ms);
    // Lets the idle release run in `reopen` mode; not counted.
    if (mode === 'reopen') await new Promise((r) => setTimeout(r, 5));
  }
  const cpu = process.cpuUsage(cpu0);
  const t0 = performance.now();
  await writer.close();
  const closeMs = performance.now() - t0;
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const tenth = Math.max(1, Math.floor(batches / 10));
  console.log(
    `${kind}s, ${mode}${options.resend ? ', resend' : ''}: ${batches} × ${BATCH} records, ${Math.round((batches * BATCH) / (busyMs / 1000))} records/s, ${((cpu.user + cpu.system) / (batches * BATCH)).toFixed(1)} µs of CPU a record;` +
      ` batch avg ${avg(perBatch).toFixed(1)} ms (first ${tenth}: ${avg(perBatch.slice(0, tenth)).toFixed(1)} ms, last ${tenth}: ${avg(perBatch.slice(-tenth)).toFixed(1)} ms); final close ${closeMs.toFixed(0)} ms`,
  );
  await rm(dataDir, { recursive: true, force: true });
}

void main();
