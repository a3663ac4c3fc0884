import { historyHeldBackBy, LoopDelayWatch, loopDelayReader } from '../../src/core/loop-delay';
import { waitFor } from '../helpers/wait';

/** The API's loop delay as the delivery thread reads it: measured on one thread, read through shared memory. */
test('a loop held up for 300 ms reads as delayed, then as not delayed once it runs freely again', async () => {
  // Windows of half a second (the relay's), read every 10 ms: a window's figure is never missed.
  const watch = new LoopDelayWatch().start(500);
  const poll = { intervalMs: 10 };
  const delay = loopDelayReader(watch.buffer);
  const heldBack = historyHeldBackBy(delay, 40)!;
  try {
    await waitFor(() => delay() > 0 && delay() < 40, { ...poll, message: 'a free loop measured' });
    expect(heldBack()).toBe(false);
    const until = performance.now() + 300;
    while (performance.now() < until) {
      // A synchronous stretch: the loop waits for it, as requests wait for a long decode.
    }
    await waitFor(() => delay() >= 250, { ...poll, message: 'the held loop measured' });
    expect(heldBack()).toBe(true);
    await waitFor(() => delay() < 40, { ...poll, message: 'the free loop measured again' });
    expect(heldBack()).toBe(false);
  } finally {
    watch.stop();
  }
});

test('a bound of 0 never holds history back', () => {
  expect(historyHeldBackBy(() => 1000, 0)).toBeUndefined();
});
