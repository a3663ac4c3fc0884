import { createKeyedMutex } from '../../../connectors/shared/keyed-mutex';

test('one call at a time per key; an aborted waiter gives up at once and its work never runs', async () => {
  const withLock = createKeyedMutex();
  let release!: () => void;
  const order: string[] = [];
  const first = withLock('k', () => new Promise<void>((r) => (release = () => (order.push('first'), r()))));
  const waiter = new AbortController();
  const abandoned = withLock('k', async () => void order.push('abandoned'), waiter.signal);
  const next = withLock('k', async () => void order.push('next'));
  waiter.abort(new Error('deadline'));
  await expect(abandoned).rejects.toThrow('deadline');
  release();
  await Promise.all([first, next]);
  expect(order).toEqual(['first', 'next']);
});

test('other keys do not wait', async () => {
  const withLock = createKeyedMutex();
  const held = withLock('a', () => new Promise<void>(() => undefined));
  await expect(withLock('b', async () => 'free')).resolves.toBe('free');
  void held;
});

test('a caller that stops waiting while its work runs does not free the key: the next call waits for that work', async () => {
  const withLock = createKeyedMutex();
  let release!: () => void;
  const order: string[] = [];
  const caller = new AbortController();
  const running = withLock('k', () => new Promise<void>((r) => (release = () => (order.push('first done'), r()))), caller.signal);
  await Promise.resolve();
  caller.abort(new Error('stopping'));
  await expect(running).rejects.toThrow('stopping');
  // The first call's work is still running (a database query cannot be taken back).
  const next = withLock('k', async () => void order.push('next'));
  await new Promise((r) => setTimeout(r, 20));
  expect(order).toEqual([]);
  release();
  await next;
  expect(order).toEqual(['first done', 'next']);
});
