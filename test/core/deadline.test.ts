import { linkedController, withDeadline } from '../../src/core/deadline';
import { collectGarbageOften } from '../helpers/gc';

const never = () => new Promise<never>(() => undefined);
const opts = (timeoutMs: number, signal = new AbortController().signal) => ({ timeoutMs, signal, timeoutError: () => new Error(`late after ${timeoutMs}`) });

test('rejects at the deadline although the call never settles and ignores its signal, with garbage collected meanwhile', async () => {
  const stopGc = collectGarbageOften(5);
  try {
    await expect(withDeadline(opts(100), never)).rejects.toThrow('late after 100');
  } finally {
    stopGc();
  }
});

test('aborts the signal the call was given when the deadline passes', async () => {
  let given: AbortSignal | undefined;
  await expect(withDeadline(opts(50), (s) => ((given = s), never()))).rejects.toThrow('late after 50');
  expect(given!.aborted).toBe(true);
  expect((given!.reason as Error).message).toBe('late after 50');
});

test('an outer abort rejects at once with its own error', async () => {
  const outer = new AbortController();
  const p = withDeadline({ ...opts(60_000, outer.signal), abortError: () => new Error('stopping') }, never);
  outer.abort(new Error('bye'));
  await expect(p).rejects.toThrow('stopping');
  await expect(withDeadline(opts(60_000, outer.signal), never)).rejects.toThrow('bye');
});

test('settles with the call when it is in time', async () => {
  await expect(withDeadline(opts(1000), async () => 7)).resolves.toBe(7);
  await expect(withDeadline(opts(1000), async () => Promise.reject(new Error('own')))).rejects.toThrow('own');
});

test('linkedController aborts with the first source signal to abort', () => {
  const a = new AbortController();
  const b = new AbortController();
  const linked = linkedController(a.signal, b.signal);
  b.abort('b first');
  a.abort('a later');
  expect(linked.signal.reason).toBe('b first');
  const already = linkedController(AbortSignal.abort('done'));
  expect(already.signal.aborted).toBe(true);
});
