import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';

/**
 * The API's event-loop delay, measured where the API runs and read where history is delivered:
 * the delivery loops hold their history lane back while live requests wait on a busy loop
 * (jobs/delivery/delivery-loop.ts). In `npm start` the delivery runs in a worker thread
 * (src/boot/delivery-thread.ts), so the figure crosses threads in a SharedArrayBuffer: one Int32
 * written by the API's thread and read by the delivery thread, no message and no lock.
 */

/** Milliseconds of each window whose 99th percentile is published. */
export const LOOP_DELAY_WINDOW_MS = 500;

/** The memory the figure lives in: created by the watcher, handed to the reader. */
export function loopDelayBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
}

/** How often the loop is sampled: a timer this often, whose lateness is the loop's delay. */
const SAMPLE_MS = 10;

/**
 * Watches this thread's event loop: every LOOP_DELAY_WINDOW_MS, the 99th percentile of its delay
 * over the window just ended, in whole milliseconds, into `buffer`. The delay is sampled by a timer
 * of its own (how late each tick comes), not by `monitorEventLoopDelay`, whose reset forgets when
 * it last sampled: a stall that begins right after a window's reset was not counted at all.
 */
export class LoopDelayWatch {
  private readonly histogram: RecordableHistogram = createHistogram();
  private readonly cell: Int32Array;
  private sampler: NodeJS.Timeout | undefined;
  private publisher: NodeJS.Timeout | undefined;

  constructor(readonly buffer: SharedArrayBuffer = loopDelayBuffer()) {
    this.cell = new Int32Array(buffer);
  }

  start(windowMs = LOOP_DELAY_WINDOW_MS): this {
    let last = performance.now();
    this.sampler = setInterval(() => {
      const now = performance.now();
      this.histogram.record(Math.max(1, Math.round(now - last - SAMPLE_MS)));
      last = now;
    }, SAMPLE_MS);
    this.publisher = setInterval(() => {
      // How late the sampler is now counts too: a stall still under way when the window ends.
      const pending = Math.round(performance.now() - last - SAMPLE_MS);
      Atomics.store(this.cell, 0, Math.max(this.histogram.count > 0 ? this.histogram.percentile(99) : 0, pending));
      this.histogram.reset();
    }, windowMs);
    this.sampler.unref();
    this.publisher.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.sampler);
    clearInterval(this.publisher);
  }
}

/** The last window's 99th percentile of the watched loop's delay (ms), from any thread. */
export function loopDelayReader(buffer: SharedArrayBuffer): () => number {
  const cell = new Int32Array(buffer);
  return () => Atomics.load(cell, 0);
}

/** Whether history should wait: the API's loop delay past `maxMs` (0: never). */
export function historyHeldBackBy(delayMs: () => number, maxMs: number): (() => boolean) | undefined {
  return maxMs > 0 ? () => delayMs() > maxMs : undefined;
}
