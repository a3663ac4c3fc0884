/**
 * `npm run bench:cli` — wall time of CLI commands that read Redis only, as an operator runs them:
 * one `node bin/tributary.js …` process per call, against the local Redis under a temporary
 * prefix (deleted at the end), with a seeded tracker that has a `local` destination. The baseline,
 * measured in the same run and interleaved with the commands, is `node -e ''`: the start of Node
 * itself, which no change of ours can remove. Prints median and p90 per command, and what the
 * command adds to the baseline's median.
 *
 * Options: `--runs N` (default 20), `--bin PATH` (default bin/tributary.js; e.g. a copy of an older
 * build, to compare), `--npx` (also time `npx tributary trackers list`, npm's start included).
 * Env: BENCH_REDIS_URL (default redis://127.0.0.1:6379). Build first (`npm run bench:cli` does).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';

const { values: args } = parseArgs({ options: { runs: { type: 'string' }, bin: { type: 'string' }, npx: { type: 'boolean' } } });
const RUNS = Number(args.runs ?? 20);
const ROOT = path.join(__dirname, '..');
const BIN = path.resolve(args.bin ?? path.join(ROOT, 'bin', 'tributary.js'));
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `bench-cli-${process.pid}`;
const DATA_DIR = mkdtempSync(path.join(os.tmpdir(), 'tributary-bench-cli-'));
const ENV = { ...process.env, REDIS_URL, REDIS_PREFIX: PREFIX, DATA_DIR };

interface Case {
  label: string;
  file: string;
  args: string[];
}

const BASELINE: Case = { label: "node -e ''", file: process.execPath, args: ['-e', ''] };
const CASES: Case[] = [
  BASELINE,
  { label: 'trackers list', file: process.execPath, args: [BIN, 'trackers', 'list'] },
  { label: 'trackers show bench', file: process.execPath, args: [BIN, 'trackers', 'show', 'bench'] },
  { label: 'destinations list bench', file: process.execPath, args: [BIN, 'destinations', 'list', 'bench'] },
  { label: 'dlq list bench local', file: process.execPath, args: [BIN, 'dlq', 'list', 'bench', 'local'] },
  ...(args.npx ? [{ label: 'npx tributary trackers list', file: 'npx', args: ['--no-install', 'tributary', 'trackers', 'list'] }] : []),
];

/** Runs one process to its end; resolves with its wall time in ms, rejects on a non-zero exit. */
function timed(c: Case): Promise<number> {
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    execFile(c.file, c.args, { cwd: ROOT, env: ENV }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`${c.label}: ${stderr.trim() || err.message}`));
      else resolve(Number(process.hrtime.bigint() - start) / 1e6);
    });
  });
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

async function deletePrefix(): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${PREFIX}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

async function main(): Promise<void> {
  const cpus = os.cpus();
  console.log(`machine: ${cpus.length} × ${cpus[0]?.model ?? '?'}; node ${process.version}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`cli: ${BIN}; ${RUNS} runs per command, interleaved; Redis ${REDIS_URL}, prefix ${PREFIX}`);
  // Node reads these certificates as it starts, before any script: 40-50 ms on a 2 vCPU VM, paid by
  // the baseline and every command alike. Figures with and without it are not comparable.
  if (process.env.NODE_EXTRA_CA_CERTS) console.log(`NODE_EXTRA_CA_CERTS is set (${process.env.NODE_EXTRA_CA_CERTS}): every process here, the baseline too, loads it first`);
  await timed({ label: 'seed tracker', file: process.execPath, args: [BIN, 'trackers', 'create', '--id', 'bench', '--name', 'Bench'] });
  await timed({ label: 'seed destination', file: process.execPath, args: [BIN, 'destinations', 'add', 'bench', '--type', 'local'] });

  const times = new Map<Case, number[]>(CASES.map((c) => [c, []]));
  // Round-robin, so that a busy moment of the machine falls on every command alike.
  for (let run = 0; run < RUNS; run++) {
    for (const c of CASES) times.get(c)!.push(await timed(c));
  }

  const baseline = [...times.get(BASELINE)!].sort((a, b) => a - b);
  const baseMedian = quantile(baseline, 0.5);
  console.log(`\n${'command'.padEnd(30)} ${'median'.padStart(8)} ${'p90'.padStart(8)} ${'over baseline'.padStart(14)} ${'ratio'.padStart(6)}`);
  for (const c of CASES) {
    const sorted = [...times.get(c)!].sort((a, b) => a - b);
    const median = quantile(sorted, 0.5);
    const over = c === BASELINE ? '' : `+${(median - baseMedian).toFixed(0)} ms`;
    console.log(`${c.label.padEnd(30)} ${`${median.toFixed(0)} ms`.padStart(8)} ${`${quantile(sorted, 0.9).toFixed(0)} ms`.padStart(8)} ${over.padStart(14)} ${(median / baseMedian).toFixed(2).padStart(6)}`);
  }
  console.log(`load average after: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    await deletePrefix();
    rmSync(DATA_DIR, { recursive: true, force: true });
  });
