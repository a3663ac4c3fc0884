import { ConfigurationError, isConnectorError, PermanentError, RetryableError, type ConnectorError } from '../../../connectors/errors';
import type { WriteOptions } from '../../../connectors/types';
import type { RecordKind, TrackedRecord } from '../../../src/core/records/types';
import { event, session, user } from '../../helpers/record-builders';
import type { ContractDestination, ContractHarness, StoredRow } from './harness';

export type { ContractDestination, ContractHarness, StoredRow } from './harness';
export { storedRow } from './harness';

/**
 * What the delivery loop (jobs/delivery/delivery-loop.ts) makes of each record after one write: its
 * outcome, or for a whole-batch error the error's kind — retried, dead-lettered, or paused.
 */
type Fate = { status: 'ok' } | { status: 'retry' | 'failed' | 'paused'; error: ConnectorError };

const KIND_FATE = { retryable: 'retry', permanent: 'failed', configuration: 'paused' } as const;

async function write(d: ContractDestination, records: TrackedRecord[], options?: WriteOptions, signal = new AbortController().signal): Promise<Fate[]> {
  let outcomes;
  try {
    outcomes = await d.writer.write(records, signal, options);
  } catch (err) {
    // The interface allows nothing else to be thrown: the plumbing could not tell what to do.
    if (!isConnectorError(err)) throw new Error(`write threw something other than a ConnectorError: ${String(err)}`, { cause: err });
    return records.map(() => ({ status: KIND_FATE[err.kind], error: err }));
  }
  expect(outcomes).toHaveLength(records.length);
  return outcomes.map((o) => (o.status === 'ok' ? { status: 'ok' } : o));
}

const statuses = (fates: readonly Fate[]) => fates.map((f) => f.status);
const errorsOf = (fates: readonly Fate[]) => fates.map((f) => (f.status === 'ok' ? undefined : f.error));
const ok = (n: number) => Array<string>(n).fill('ok');

const KEY: Readonly<Record<RecordKind, string>> = { event: '_id', user: '_uid', session: '_sid' };

/** Stored keys of a kind, sorted, repeats kept: a record stored twice shows twice. */
async function keys(d: ContractDestination, kind: RecordKind): Promise<string[]> {
  return (await d.rows(kind)).map((r) => String(r[KEY[kind]])).sort();
}

const idsOf = (records: readonly TrackedRecord[]) => records.map((r) => r.id).sort();

/** The one stored row of a key. */
async function row(d: ContractDestination, kind: RecordKind, key: string): Promise<StoredRow> {
  const rows = (await d.rows(kind)).filter((r) => r[KEY[kind]] === key);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

/**
 * The behaviour every connector owes the delivery plumbing (connectors/types.ts), run against a
 * destination of its own through `harness`. A new connector runs it unchanged from
 * `test/connectors/<type>/contract.test.ts` (see connectors/README.md).
 */
export function describeConnectorContract(name: string, harness: ContractHarness): void {
  describe(`${name}: connector contract`, () => {
    let d: ContractDestination;
    if (harness.setup) beforeAll(() => harness.setup!());
    if (harness.teardown) afterAll(() => harness.teardown!());
    beforeEach(async () => {
      d = await harness.open();
    });
    afterEach(() => d.close());

    describe('events, exactly once', () => {
      it('a batch written again after its answer was lost is stored once', async () => {
        const first = event('view', { n: 0 });
        expect(statuses(await write(d, [first]))).toEqual(ok(1));
        const batch = [event('view', { n: 1 }), event('view', { n: 2 }), event('click', { n: 3 })];
        await d.loseAnswer('event');
        expect(statuses(await write(d, batch))).toEqual(['retry', 'retry', 'retry']);
        // The write landed; only its answer was lost. Otherwise the retry below would prove nothing.
        expect(await keys(d, 'event')).toEqual(idsOf([first, ...batch]));
        const more = event('view', { n: 4 });
        expect(statuses(await write(d, [...batch, more], { resend: true }))).toEqual(ok(4));
        expect(await keys(d, 'event')).toEqual(idsOf([first, ...batch, more]));
      });

      it('a batch that succeeded, re-sent to the same writer with resend, is stored once', async () => {
        // The delivery loop re-sends a written batch when moving its cursor failed afterwards.
        const batch = [event('view', { n: 1 }), event('click', { n: 2 })];
        expect(statuses(await write(d, batch))).toEqual(ok(2));
        const more = event('view', { n: 3 });
        expect(statuses(await write(d, [...batch, more], { resend: true }))).toEqual(ok(3));
        expect(await keys(d, 'event')).toEqual(idsOf([...batch, more]));
      });

      it('a batch re-sent by a new writer, as after a restart, is stored once', async () => {
        await write(d, [event('view', { n: 0 })]);
        const batch = [event('view', { n: 1 }), event('view', { n: 2 })];
        await d.loseAnswer('event');
        expect(statuses(await write(d, batch))).toEqual(['retry', 'retry']);
        await d.reopen();
        expect(statuses(await write(d, batch, { resend: true }))).toEqual(ok(2));
        const stored = await keys(d, 'event');
        expect(stored).toHaveLength(3);
        expect(new Set(stored).size).toBe(3);
      });

      it('an event repeated within one batch is stored once, and both answers are ok', async () => {
        const e = event('view', { n: 1 });
        expect(statuses(await write(d, [e, e]))).toEqual(ok(2));
        expect(await keys(d, 'event')).toEqual([e.id]);
      });
    });

    describe('users and sessions, merged by key', () => {
      it('absent properties keep their value and null clears, across batches', async () => {
        expect(statuses(await write(d, [user('u1', { plan: 'free', age: 30, city: 'Oslo' })]))).toEqual(ok(1));
        const latest = user('u1', { plan: 'pro', age: null });
        expect(statuses(await write(d, [latest]))).toEqual(ok(1));
        expect(await row(d, 'user', 'u1')).toEqual({ _id: latest.id, _uid: 'u1', plan: 'pro', city: 'Oslo' });
      });

      it('updates to one key in one batch apply in order', async () => {
        const batch = [user('u1', { x: 1 }), user('u1', { x: 2, y: 'a' }), user('u1', { x: null }), user('u1', { x: 3 }), user('u2', { x: 9 }), user('u2', { x: null, z: true })];
        expect(statuses(await write(d, batch))).toEqual(ok(6));
        expect(await row(d, 'user', 'u1')).toMatchObject({ x: 3, y: 'a' });
        expect(await row(d, 'user', 'u2')).toEqual({ _id: batch[5]!.id, _uid: 'u2', z: true });
      });

      it("a session update without _uid keeps the stored one, and null clears a session's property", async () => {
        await write(d, [session('s1', { step: 1, ref: 'ads' }, 'u1')]);
        expect(statuses(await write(d, [session('s1', { step: 2, ref: null })]))).toEqual(ok(1));
        expect(await row(d, 'session', 's1')).toMatchObject({ _uid: 'u1', _sid: 's1', step: 2 });
        expect(await row(d, 'session', 's1')).not.toHaveProperty('ref');
      });

      it('a batch written again after its answer was lost leaves one row per key, merged once', async () => {
        await write(d, [user('u1', { n: 1, keep: 'yes' }), session('s1', { n: 1 })]);
        const batch = [user('u2', { n: 2 }), user('u1', { n: 11 }), session('s1', { n: 12 }), session('s2', { n: 2 })];
        await d.loseAnswer('user');
        expect(statuses(await write(d, batch))).toContain('retry');
        expect(statuses(await write(d, batch, { resend: true }))).toEqual(ok(4));
        expect(await keys(d, 'user')).toEqual(['u1', 'u2']);
        expect(await keys(d, 'session')).toEqual(['s1', 's2']);
        expect(await row(d, 'user', 'u1')).toMatchObject({ n: 11, keep: 'yes' });
        expect(await row(d, 'session', 's1')).toMatchObject({ n: 12 });
      });
    });

    describe('columns follow the data', () => {
      it("a new event property adds a column; earlier rows leave it empty, their columns keep their values", async () => {
        const [a, b] = [event('view', { page: '/a' }), event('view', { page: '/b', coupon: 'SPRING', seats: 2 })];
        await write(d, [a]);
        expect(statuses(await write(d, [b]))).toEqual(ok(1));
        const rows = new Map((await d.rows('event')).map((r) => [r._id, r]));
        expect(rows.get(a.id)).toEqual({ _id: a.id, _event: 'view', page: '/a' });
        expect(rows.get(b.id)).toEqual({ _id: b.id, _event: 'view', page: '/b', coupon: 'SPRING', seats: 2 });
      });

      it('a new user property adds a column to the existing row', async () => {
        await write(d, [user('u1', { plan: 'free' })]);
        expect(statuses(await write(d, [user('u1', { verified: true })]))).toEqual(ok(1));
        expect(await row(d, 'user', 'u1')).toMatchObject({ plan: 'free', verified: true });
      });
    });

    describe('errors: the type decides what delivery does', () => {
      it('a user without _uid and a session without _sid fail with PermanentError; the rest is written', async () => {
        const good = [user('u1', { a: 1 }), event('view', {})];
        const fates = await write(d, [{ ...user('x', {}), uid: undefined }, good[0]!, { ...session('x', {}), sid: undefined }, good[1]!]);
        expect(statuses(fates)).toEqual(['failed', 'ok', 'failed', 'ok']);
        expect(errorsOf(fates)[0]).toBeInstanceOf(PermanentError);
        expect(errorsOf(fates)[2]).toBeInstanceOf(PermanentError);
        expect(await keys(d, 'user')).toEqual(['u1']);
        expect(await keys(d, 'event')).toEqual([good[1]!.id]);
      });

      it('events the destination refuses for good fail with PermanentError, never retry, and it carries on', async () => {
        await write(d, [event('view', { n: 0 })]);
        const refused = await d.refuse([event('view', { n: 1 }), event('view', { n: 2 })]);
        const fates = await write(d, refused);
        expect(statuses(fates)).toEqual(['failed', 'failed']);
        for (const error of errorsOf(fates)) expect(error).toBeInstanceOf(PermanentError);
        const after = event('view', { n: 3 });
        expect(statuses(await write(d, [after]))).toEqual(ok(1));
        expect(await keys(d, 'event')).not.toContain(refused[0]!.id);
        expect(await keys(d, 'event')).toContain(after.id);
      });

      it.each(harness.transientFaults.map((f) => [f]))('%s: RetryableError, then the same batch is written once', async (fault) => {
        await write(d, [event('view', { n: 0 })]);
        const batch = [event('view', { n: 1 }), user('u1', { n: 1 }), event('view', { n: 2 })];
        await d.failTransiently(fault);
        const fates = await write(d, batch);
        expect(statuses(fates)).toContain('retry');
        expect(statuses(fates)).not.toContain('failed');
        for (const error of errorsOf(fates)) if (error) expect(error).toBeInstanceOf(RetryableError);
        await d.clearFaults();
        expect(statuses(await write(d, batch, { resend: true }))).toEqual(ok(3));
        expect(await keys(d, 'event')).toHaveLength(3);
        expect(await row(d, 'user', 'u1')).toMatchObject({ n: 1 });
      });

      it('no access: ConfigurationError for the batch, so delivery pauses and nothing is dead-lettered; written once access is back', async () => {
        // Every table exists already: the refusal comes from the write itself, not from making a table.
        await write(d, [event('view', { n: 0 }), user('u0', {}), session('s0', {})]);
        const batch = [event('view', { n: 1 }), user('u1', { n: 1 })];
        await d.denyAccess();
        const fates = await write(d, batch);
        expect(statuses(fates)).toEqual(['paused', 'paused']);
        expect(errorsOf(fates)[0]).toBeInstanceOf(ConfigurationError);
        await d.clearFaults();
        expect(statuses(await write(d, batch, { resend: true }))).toEqual(ok(2));
        expect(await keys(d, 'event')).toHaveLength(2);
      });

      it('a write on an aborted signal, or after close, is RetryableError: the records are sent again later', async () => {
        const aborted = new AbortController();
        aborted.abort();
        expect(statuses(await write(d, [event('view', {})], undefined, aborted.signal))).toEqual(['retry']);
        await d.writer.close();
        expect(statuses(await write(d, [event('view', {})]))).toEqual(['retry']);
      });
    });
  });
}
