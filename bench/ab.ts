import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { generateToken } from '../src/core/trackers/tokens';
import { ask, buildChildren, forkChild, nextMessage, stopChild, type Message } from './child';
import type { LoadResult } from './load-generator';
import type { PacedPlan, PacedResult } from './paced-load';
import { alternatePairs, type PairedSample } from './pairs';
import { processCpuSeconds } from './proc-stats';
import { deletePrefix } from './queue-records';
import { startTributary, type TributaryServer } from './tributary-server';

/**
 * `npm run bench:ab -- --b=--max-semi-space-size=64 [--a=FLAGS] [--a-env='K=V …'] [--b-env='K=V …'] [--records 1] [--rounds 10] [--seconds 2] [--rate N]`
 * (flags after `=`, quoted when several: `--b='--flag-one --flag-two'`)
 *
 * Two API servers at once (`start:api`'s flags, then `--a`'s or `--b`'s node flags, and `--a-env`'s
 * or `--b-env`'s settings, e.g. `--b-env=REQUEST_HISTORY_SIZE=0` for what the history costs), each under a
 * Redis prefix of its own, loaded in turn by the same load generator for `--seconds` at a time,
 * `--rounds` pairs, the order alternating. On a VM whose speed drifts by a fifth over tens of
 * seconds, runs of 10 s one after the other measured the drift more than the change; short runs
 * side by side see the same machine. Prints each pair and the median ratio B/A of requests a
 * second and of server CPU a request. `--records 100` sends arrays of 100 events. `--rate N` sends N
 * requests a second, evenly paced (bench/paced-load.ts, 32 connections) instead of as many as 50
 * connections get answered: CPU a request at a fixed load, and a p99 not made of autocannon's bursts.
 */
const { values: args } = parseArgs({
  options: { a: { type: 'string' }, b: { type: 'string' }, 'a-env': { type: 'string' }, 'b-env': { type: 'string' }, records: { type: 'string' }, rate: { type: 'string' }, rounds: { type: 'string' }, seconds: { type: 'string' } },
});
const flags = (raw: string | undefined) => (raw ?? '').split(' ').filter(Boolean);
/** `K=V K=V` → settings. */
const envOf = (raw: string | undefined): Record<string, string> =>
  Object.fromEntries(
    flags(raw).map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 1) throw new Error(`--a-env and --b-env take NAME=value pairs, got ${pair}`);
      return [pair.slice(0, eq), pair.slice(eq + 1)];
    }),
  );
const settings = {
  a: flags(args.a),
  b: flags(args.b),
  aEnv: envOf(args['a-env']),
  bEnv: envOf(args['b-env']),
  records: Number(args.records ?? 1),
  rounds: Number(args.rounds ?? 10),
  seconds: Number(args.seconds ?? 2),
  rate: args.rate === undefined ? undefined : Number(args.rate),
};
if (settings.rate !== undefined && !(settings.rate > 0)) throw new Error(`--rate must be a positive number, got ${args.rate}`);

interface Sample extends PairedSample {
  p99: number;
}

async function main(): Promise<void> {
  const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const prefixes = [`bench-ab-a-${randomUUID().slice(0, 8)}`, `bench-ab-b-${randomUUID().slice(0, 8)}`] as const;
  const servers: TributaryServer[] = [];
  buildChildren();
  const loader = forkChild(settings.rate ? 'paced-load.ts' : 'load-generator.ts');
  try {
    await nextMessage(loader, 'ready');
    const trackers = [{ id: 'ab', token: generateToken() }, { id: 'ab', token: generateToken() }] as const;
    for (const [i, [nodeArgs, env]] of ([[settings.a, settings.aEnv], [settings.b, settings.bEnv]] as const).entries()) {
      servers.push(await startTributary({ redis, redisUrl: 'redis://127.0.0.1:6379', prefix: prefixes[i]!, trackers: [trackers[i]!], processes: 1, nodeArgs, env }));
    }
    const run = async (i: 0 | 1, seconds: number): Promise<Sample> => {
      const server = servers[i]!;
      const cpu0 = processCpuSeconds(server.pids[0]!);
      const url = `http://127.0.0.1:${server.port}`;
      const authorization = `Tracker ${trackers[i]!.token}`;
      if (settings.rate) {
        const paced: PacedPlan = { url, path: '/v3/event', connections: 32, seconds, rate: settings.rate, recordsPerRequest: settings.records, seed: 1, authorization };
        const { result } = await ask<Message & { result: PacedResult }>(loader, { type: 'run', plan: paced as unknown as Message[string] }, 'result', (seconds + 60) * 1000);
        return { requestsPerSecond: result.rate, cpuPerRequest: (processCpuSeconds(server.pids[0]!) - cpu0) / Math.max(result.ok, 1), p99: Math.round(result.p99 * 10) / 10 };
      }
      const plan = { url, path: '/v3/event', connections: 50, duration: seconds, recordsPerRequest: settings.records, seed: 1, authorization };
      const { result } = await ask<Message & { result: LoadResult }>(loader, { type: 'run', plan: plan as unknown as Message[string] }, 'result', (seconds + 60) * 1000);
      return { requestsPerSecond: result.requestsPerSecond, cpuPerRequest: (processCpuSeconds(server.pids[0]!) - cpu0) / Math.max(result.responses, 1), p99: result.p99 };
    };
    console.log(`# bench:ab  ${new Date().toISOString()}  ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}; node ${process.version}`);
    const label = (nodeArgs: readonly string[], env: Record<string, string>) => [...Object.entries(env).map(([k, v]) => `${k}=${v}`), 'start:api', ...nodeArgs].join(' ');
    console.log(`A: ${label(settings.a, settings.aEnv)}\nB: ${label(settings.b, settings.bEnv)}\n${settings.records === 1 ? 'single events' : `arrays of ${settings.records}`}, ${settings.rate ? `${settings.rate} requests/s paced over 32 connections` : '50 connections'}, ${settings.rounds} pairs of ${settings.seconds} s\n`);
    await run(0, 3);
    await run(1, 3);
    const show = (s: Sample) => `${s.requestsPerSecond.toFixed(0).padStart(6)} req/s ${(s.cpuPerRequest * 1e6).toFixed(0).padStart(5)} µs/req p99 ${String(s.p99).padStart(3)} ms`;
    const paired = await alternatePairs(
      settings.rounds,
      () => run(0, settings.seconds),
      () => run(1, settings.seconds),
      (s) => s,
      (round, a, b) => console.log(`pair ${String(round).padStart(2)}: A ${show(a)} | B ${show(b)} | B/A ${(b.requestsPerSecond / a.requestsPerSecond).toFixed(3)}`),
    );
    console.log(`\nmedian B/A: ${paired.requests.toFixed(3)}× the requests a second, ${paired.cpu.toFixed(3)}× the server CPU a request`);
  } finally {
    for (const server of servers) await server.stop().catch(() => undefined);
    loader.send({ type: 'stop' });
    await stopChild(loader, 5_000);
    for (const prefix of prefixes) await deletePrefix(redis, prefix).catch(() => undefined);
    redis.disconnect();
  }
}

void main();
