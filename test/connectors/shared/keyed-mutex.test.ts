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
