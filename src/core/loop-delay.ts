import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

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

/**
 * Watches this thread's event loop: every LOOP_DELAY_WINDOW_MS, the 99th percentile of its delay
 * over the window just ended, in whole milliseconds, into `buffer`.
 */
export class LoopDelayWatch {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private readonly cell: Int32Array;
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly buffer: SharedArrayBuffer = loopDelayBuffer()) {
    this.cell = new Int32Array(buffer);
  }

  start(windowMs = LOOP_DELAY_WINDOW_MS): this {
    this.histogram.enable();
    this.timer = setInterval(() => {
      // The histogram is in nanoseconds; an empty window (no sample yet) reads as 0.
      Atomics.store(this.cell, 0, Math.round(this.histogram.percentile(99) / 1e6));
      this.histogram.reset();
    }, windowMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
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
