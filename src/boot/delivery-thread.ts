import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { RedisTarget } from '../core/redis/cluster';
import type { Logger } from '../core/logger';

/** What the thread is started with (structured-cloned): the rest it reads as the process does (config from the environment). */
export interface DeliveryThreadData {
  kind: 'tributary-delivery';
  redis: RedisTarget;
  /** The role name its log lines carry, as the process's do. */
  role: string;
  /** The API's event-loop delay, written by the process's thread (src/core/loop-delay.ts); none: history never waits for it. */
  apiLoopDelay?: SharedArrayBuffer;
}

/** Messages between the process and its delivery thread. */
export type ToThread = { type: 'stop' };
export type FromThread = { type: 'ready'; connectors: string[] } | { type: 'stopped' } | { type: 'failed'; message: string };

export interface DeliveryThread {
  connectors: string[];
  /** Finishes or hands back the work in hand (as WorkerRuntime.close does), then ends the thread. */
  close: () => Promise<void>;
}

const SEMI_SPACE = /^--max-semi-space-size=(\d+)$/;

/**
 * A thread takes the process's loaders (tsx under the sources) but not V8's heap flags, which Node
 * refuses there: the young generation the start scripts give the process
 * (`--max-semi-space-size=32`, the scavenger's room) is given to the thread as its resource limit
 * (V8's young generation is three semi-spaces).
 */
export function threadOptions(execArgv: readonly string[]): { execArgv: string[]; resourceLimits?: { maxYoungGenerationSizeMb: number } } {
  const semiSpace = execArgv.map((a) => SEMI_SPACE.exec(a)?.[1]).find((v) => v !== undefined);
  const passed = execArgv.filter((a) => !/^--(max|min)-semi-space-size|^--max-old-space-size|^--heap-|^--(no-)?expose-gc/.test(a));
  return { execArgv: passed, ...(semiSpace ? { resourceLimits: { maxYoungGenerationSizeMb: 3 * Number(semiSpace) } } : {}) };
}

/**
 * Routing, delivery, the archive and the history lane of `npm start`, in a worker thread: its own
 * event loop and heap, so that decoding history frames, DuckDB's appends and their garbage never
 * hold a live request up on the API's loop (the split deployment's gain, in one process).
 * `onCrash` hears a thread that ends by itself: the process then has no delivery, and should exit
 * for its supervisor to start it again.
 */
export async function startDeliveryThread(redis: RedisTarget, role: string, logger: Logger, onCrash: (err: Error) => void, apiLoopDelay?: SharedArrayBuffer): Promise<DeliveryThread> {
  // The entry beside this file, compiled (.js) or run from the sources (.ts, under tsx, which the thread inherits through execArgv).
  const entry = path.join(__dirname, `delivery-thread-main${path.extname(__filename)}`);
  const data: DeliveryThreadData = { kind: 'tributary-delivery', redis, role, ...(apiLoopDelay ? { apiLoopDelay } : {}) };
  const worker = new Worker(entry, { workerData: data, ...threadOptions(process.execArgv) });
  let stopping = false;

  const ready = await new Promise<string[]>((resolve, reject) => {
    const onMessage = (m: FromThread) => {
      if (m.type === 'ready') resolve(m.connectors);
      else if (m.type === 'failed') reject(new Error(m.message));
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the delivery thread ended (code ${code}) before it was ready`)));
  });
  worker.removeAllListeners('error');
  worker.removeAllListeners('exit');
  worker.on('error', (err) => {
    logger.error({ err: err.message }, 'delivery thread failed');
    if (!stopping) onCrash(err);
  });
  worker.on('exit', (code) => {
    if (!stopping) onCrash(new Error(`the delivery thread ended (code ${code})`));
  });

  return {
    connectors: ready,
    close: async () => {
      stopping = true;
      const stopped = new Promise<void>((resolve) => {
        worker.on('message', (m: FromThread) => m.type === 'stopped' && resolve());
        worker.once('exit', () => resolve());
      });
      worker.postMessage({ type: 'stop' } satisfies ToThread);
      await stopped;
      await worker.terminate();
    },
  };
}
