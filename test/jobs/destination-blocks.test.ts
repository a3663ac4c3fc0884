import { routedBlocks, type StepRecords } from '../../jobs/routing/destination-blocks';
import { parseExactJson, stringifyExactJson } from '../../src/core/records/exact-json';
import type { TrackedRecord } from '../../src/core/records/types';
import { RulesCache } from '../../src/core/rules/compile';
import type { Destination } from '../../src/core/trackers/types';
import { event, user } from '../helpers/record-builders';

/** A routing step's records as the router has them: texts, and values read back from them. */
function step(records: TrackedRecord[]): StepRecords & { calls: () => number } {
  const texts = records.map((r) => stringifyExactJson(r));
  let calls = 0;
  return {
    texts,
    values: () => {
      calls++;
      return texts.map((t) => parseExactJson(t) as TrackedRecord);
    },
    calls: () => calls,
  };
}

const destination = (id: string, rules?: Destination['rules']): Destination => ({ id, type: 'local', enabled: true, settings: {}, ...(rules ? { rules } : {}) });

test('without rules every destination shares the accepted texts, and no record is read back', () => {
  const s = step([event('a', {}), event('b', {})]);
  const routed = routedBlocks(s, [destination('x'), destination('y')], new RulesCache());
  expect(routed.blocks).toEqual([s.texts]);
  expect(routed.shares.map((d) => d.block)).toEqual([0, 0]);
  expect(s.calls()).toBe(0);
});

test('destinations with the same rules share one block; a filter alone keeps the accepted texts', () => {
  const s = step([event('signup', { n: 1 }), event('page_view', { n: 2 }), user('u1', { plan: 'pro' })]);
  const signups = { filter: "_event == 'signup'" };
  const routed = routedBlocks(s, [destination('all'), destination('s1', signups), destination('s2', signups)], new RulesCache());
  expect(routed.blocks).toHaveLength(2);
  expect(routed.blocks[1]).toEqual([s.texts[0]]);
  expect(routed.shares.map((d) => d.block)).toEqual([0, 1, 1]);
  // The user has no `_event`: null, not an error.
  expect(routed.shares[1]!.counts).toEqual({ filtered: 2, sampled: 0, errors: 0 });
  expect(s.calls()).toBe(1);
});

test('a shaped record is written again with its integers beyond 2^53 exact; errors are counted with the last message', () => {
  const s = step([event('order', { id: 603851970716743426n, email: 'a@b.c' }), event('order', { email: 'b@b.c' })]);
  const routed = routedBlocks(s, [destination('bq', { filter: 'id > 0', drop: ['email'] })], new RulesCache());
  expect(routed.blocks[1]).toHaveLength(1);
  expect((routed.blocks[1] as string[])[0]).toContain('"properties":{"id":603851970716743426}');
  expect(routed.shares[0]!.counts).toEqual({ filtered: 0, sampled: 0, errors: 1, lastError: 'Unknown variable: id' });
});
