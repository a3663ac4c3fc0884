/**
 * What destination rules cost per record (`npm run bench:rules`, which compiles this file with tsc
 * and runs it as plain JavaScript, as `npm start` runs dist/), on 15-property events as
 * clients send them (a nested address among them), beside the same run without rules:
 *
 * - the rules alone (compileRules().apply): a filter, then flatten, keep and rename;
 * - a routing step for one destination with those rules (jobs/routing/destination-blocks.ts: the rules,
 *   then each delivered record written as text), against the step without rules (the records'
 *   texts as they are, shared by every destination without rules);
 * - the filter alone, in the CEL evaluator Tributary uses (@marcbachmann/cel-js) and in
 *   @bufbuild/cel, the other CEL evaluator for JavaScript, on the same expression.
 *
 * CPU time (process.cpuUsage) over BENCH_RULES_RECORDS records (default 500 000) per run, runs
 * alternated BENCH_RULES_ROUNDS times (default 5), the median printed. Goal: rules ≤ 2 µs a
 * record per destination.
 */
import { celEnv, parse as parseBuf, plan as planBuf } from '@bufbuild/cel';
import { routedBlocks, type StepRecords } from '../jobs/routing/destination-blocks';
import type { TrackedRecord } from '../src/core/records/types';
import { compileRules, RulesCache } from '../src/core/rules/compile';
import { compileFilter, isFilterProblem } from '../src/core/rules/filter';
import type { DestinationRules } from '../src/core/rules/schema';
import type { Destination } from '../src/core/trackers/types';
import { fmt } from './format';
import { median } from './pairs';

const RECORDS = Number(process.env.BENCH_RULES_RECORDS ?? 500_000);
const ROUNDS = Number(process.env.BENCH_RULES_ROUNDS ?? 5);
const EVENTS = ['page_view', 'signup', 'order', 'click', 'add_to_cart'];

/**
 * Rules that every event passes, so that each is also flattened, kept and renamed: the most a
 * record can cost (a filter that skips a record spares the rest).
 */
const RULES: DestinationRules = {
  filter: "_type == 'event' && !(_event in ['test', 'debug'])",
  flatten: true,
  keep: ['total', 'currency', 'plan', 'address_city'],
  rename: { total: 'amount' },
};

function record(i: number): TrackedRecord {
  const at = new Date(Date.UTC(2026, 10, 27) + i).toISOString();
  // Parsed from text, as the router gets records from BullMQ.
  const properties = JSON.parse(
    JSON.stringify({
      page: '/pricing',
      path: '/pricing',
      url: 'https://www.example.com/pricing',
      title: 'Pricing',
      referrer: 'https://www.google.com/',
      utm_source: 'newsletter',
      utm_medium: 'email',
      utm_campaign: 'spring',
      browser: 'Chrome',
      country: 'FR',
      plan: 'pro',
      total: i % 97,
      currency: 'EUR',
      email: `user${i % 1000}@example.com`,
      address: { city: 'Lyon', zip: '69001' },
    }),
  ) as TrackedRecord['properties'];
  return { kind: 'event', id: `019ac5f0-0000-7000-8000-${String(i).padStart(12, '0')}`, receivedAt: at, eventAt: at, event: EVENTS[i % EVENTS.length]!, uid: `user-${i % 1000}`, properties };
}

const POOL = Array.from({ length: 1000 }, (_, i) => record(i));
const TEXTS = POOL.map((r) => JSON.stringify(r));

/** CPU µs a record of `fn` over RECORDS records, taken from the pool in turn. */
function cpuPerRecord(fn: (r: TrackedRecord, i: number) => unknown): number {
  for (let i = 0; i < 20_000; i++) fn(POOL[i % POOL.length]!, i % POOL.length);
  const start = process.cpuUsage();
  for (let i = 0; i < RECORDS; i++) fn(POOL[i % POOL.length]!, i % POOL.length);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / RECORDS;
}

/** A routing step of `size` records for one destination, as the router makes it. */
function stepCost(destination: Destination, size: number): number {
  const cache = new RulesCache();
  const steps = Array.from({ length: POOL.length / size }, (_, s): StepRecords => ({ texts: TEXTS.slice(s * size, (s + 1) * size), values: () => POOL.slice(s * size, (s + 1) * size) }));
  const start = process.cpuUsage();
  const rounds = Math.ceil(RECORDS / POOL.length);
  for (let n = 0; n < rounds; n++) for (const step of steps) routedBlocks(step, [destination], cache);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (rounds * POOL.length);
}

function main(): void {
  const rules = compileRules(RULES);
  const filter = compileFilter(RULES.filter!);
  if (isFilterProblem(filter)) throw new Error(filter.message);
  const buf = planBuf(celEnv(), parseBuf(RULES.filter!));
  let delivered = 0;
  const measures: Record<string, number[]> = { none: [], rules: [], stepNone: [], stepRules: [], celjs: [], bufbuild: [] };
  for (let round = 0; round < ROUNDS; round++) {
    measures.none!.push(cpuPerRecord((r) => r));
    measures.rules!.push(cpuPerRecord((r) => (rules.apply(r).kind === 'deliver' ? delivered++ : 0)));
    measures.stepNone!.push(stepCost({ id: 'all', type: 'local', enabled: true, settings: {} }, 50));
    measures.stepRules!.push(stepCost({ id: 'sheet', type: 'google-sheets', enabled: true, settings: {}, rules: RULES }, 50));
    measures.celjs!.push(cpuPerRecord((r) => filter.test(r)));
    measures.bufbuild!.push(cpuPerRecord((r) => buf({ _type: r.kind, _event: r.event ?? null })));
  }
  const m = (name: string) => median(measures[name]!);
  const line = (label: string, us: number, baseline?: number) => console.log(`${label.padEnd(72)} ${fmt(us, 3).padStart(7)} µs a record${baseline === undefined ? '' : `  (${fmt(us - baseline, 3)} µs more than its baseline)`}`);
  console.log(`destination rules, ${fmt(RECORDS)} 15-property events a run, median of ${ROUNDS} alternated runs; rules: ${JSON.stringify(RULES)}`);
  line('baseline: no rules (the record as it is)', m('none'));
  line('filter + flatten + keep + rename (compileRules().apply)', m('rules'), m('none'));
  line('routing step of 50 for a destination without rules (baseline)', m('stepNone'));
  line('routing step of 50 for the destination with these rules, texts written', m('stepRules'), m('stepNone'));
  line('filter alone, @marcbachmann/cel-js (what Tributary runs)', m('celjs'));
  line('filter alone, @bufbuild/cel (the other CEL evaluator), same expression', m('bufbuild'));
  const goal = m('rules') - m('none');
  console.log(`rules per record per destination: ${fmt(goal, 3)} µs (goal ≤ 2 µs: ${goal <= 2 ? 'met' : 'NOT met'}); @bufbuild/cel ÷ cel-js on the filter: ${fmt(m('bufbuild') / m('celjs'), 2)}×`);
  if (delivered === 0) throw new Error('no record passed the filter: the bench measures nothing');
}

main();
