import { RetryableError } from '../../../connectors/errors';
import type { DestinationWriter } from '../../../connectors/types';
import type { TrackedRecord } from '../../../src/core/records/types';
import { allOk, event, session, user, usePostgres } from './pg-fixture';

const pg = usePostgres('concurrent');

/** Writes as delivery does: a RetryableError (a deadlock, a serialization failure) means the same batch again. */
async function deliver(writer: DestinationWriter, records: TrackedRecord[]): Promise<number> {
  for (let retried = 0; ; retried++) {
    try {
      expect(allOk(await writer.write(records, new AbortController().signal))).toBe(true);
      return retried;
    } catch (err) {
      if (!(err instanceof RetryableError) || retried >= 5) throw err;
    }
  }
}

/**
 * Two partitions of a tracker deliver to one destination through two writers at once. A user's
 * updates usually go to one partition, but not always (a user seen from two devices, a backfill
 * beside live traffic), and then both merge into the same row.
 */
describe('postgres: two writers of the same users at once', () => {
  test('users new to the table, beside users already there: neither writer loses the other’s properties', async () => {
    const f = await pg.fixture();
    const a = await f.open();
    const b = await f.open();
    // The columns exist and both writers know them: the writes below change no table, which would
    // make them take turns.
    await deliver(a, [user('seed', { a: 0, b: 0, c: 0, d: 0, shared: '' })]);
    await deliver(b, [user('seed', { a: 0 })]);
    const uids = Array.from({ length: 200 }, (_, i) => `u${i}`);
    const rounds = 5;
    const retries: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const fresh = uids.map((u) => `${u}-${round}`);
      // Last round's users are in the table now: a batch of both kinds of keys.
      const known = round === 0 ? [] : uids.map((u) => `${u}-${round - 1}`);
      retries.push(
        ...(await Promise.all([
          deliver(a, [...fresh.map((k) => user(k, { a: 1, shared: 'a' })), ...known.map((k) => user(k, { c: round }))]),
          // The other partition sees them in another order.
          deliver(b, [...known.map((k) => user(k, { d: round })), ...[...fresh].reverse().map((k) => user(k, { b: 2, shared: 'b' }))]),
        ])),
      );
    }
    const rows = (await f.rows('users', '_uid')).filter((r) => r._uid !== 'seed');
    expect(rows).toHaveLength(uids.length * rounds);
    const lost = rows.filter((r) => {
      const round = Number(String(r._uid).split('-')[1]);
      const later = round + 1 < rounds ? { c: round + 1, d: round + 1 } : {};
      const p = r._properties as Record<string, unknown>;
      return p.a !== 1 || p.b !== 2 || p.c !== later.c || p.d !== later.d;
    });
    expect(lost.map((r) => [r._uid, r._properties])).toEqual([]);
    for (const row of rows) expect(row).toMatchObject({ a: 1, b: 2, shared: expect.stringMatching(/^[ab]$/) });
    expect(retries.filter((r) => r > 0)).toEqual([]);
  });

  test('users and sessions already there, updated by both: every update applied once', async () => {
    const f = await pg.fixture();
    const a = await f.open();
    const b = await f.open();
    const uids = Array.from({ length: 100 }, (_, i) => `u${i}`);
    await deliver(a, [...uids.map((u) => user(u, { n: 0 })), ...uids.map((u) => session(`s-${u}`, { n: 0 }, u))]);
    const updates = (writer: string, round: number) => [...uids.map((u) => user(u, { [`${writer}${round}`]: round })), ...uids.map((u) => session(`s-${u}`, { [`${writer}${round}`]: round }))];
    const retries: number[] = [];
    // Each round adds columns too: both writers change the tables before they lock rows, so they take turns instead of deadlocking.
    for (let round = 1; round <= 5; round++) retries.push(...(await Promise.all([deliver(a, updates('a', round)), deliver(b, updates('b', round))])));
    expect(retries.filter((r) => r > 0)).toEqual([]);
    const expected = { n: 0, ...Object.fromEntries([1, 2, 3, 4, 5].flatMap((r) => [[`a${r}`, r], [`b${r}`, r]])) };
    for (const table of ['users', 'sessions']) {
      const rows = await f.rows(table);
      expect(rows).toHaveLength(uids.length);
      for (const row of rows) expect(row._properties).toEqual(expected);
    }
    expect((await f.rows('sessions')).every((r) => typeof r._uid === 'string')).toBe(true);
  });

  test('events written by both, some the same: each once; new columns by both at once', async () => {
    const f = await pg.fixture();
    const a = await f.open();
    const b = await f.open();
    const events = Array.from({ length: 300 }, (_, i) => event('e', { [`p${i % 7}`]: i, [`q${i % 5}`]: `t${i}` }));
    await Promise.all([deliver(a, events.slice(0, 200)), deliver(b, events.slice(100))]);
    const rows = await f.rows('events');
    expect(rows.map((r) => r._id)).toEqual(events.map((e) => e.id));
    for (const [i, row] of rows.entries()) expect(row[`p${i % 7}`]).toBe(i);
  });
});
