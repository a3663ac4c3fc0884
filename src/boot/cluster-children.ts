import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../core/logger';

/** A child that served at least this long before dying starts its slot's back-off from zero. */
const STABLE_AFTER_MS = 30_000;
/** The second quick death of a slot in a row waits this long before the next fork, doubling up to the maximum. */
const RESTART_BASE_MS = 1000;
const RESTART_MAX_MS = 30_000;

export interface ApiChildrenOptions {
  processes: number;
  /** Added to each child's environment (the resolved REDIS_URL and ADMIN_TOKEN). */
  env: Record<string, string>;
  logger: Logger;
}

export interface ApiChildren {
  /** The children serving now (listening, not exited). */
  listening: () => Worker[];
  /** SIGTERM to every child (each runs its own graceful shutdown); resolves once all have exited. */
  stop: () => Promise<void>;
}

interface Slot {
  index: number;
  worker: Worker | undefined;
  listening: boolean;
  startedAt: number;
  /** Quick deaths in a row. */
  failures: number;
  timer: NodeJS.Timeout | undefined;
}

/** The delay before re-forking a slot whose child died after `failures` quick deaths in a row. */
export function restartDelayMs(failures: number): number {
  return failures <= 1 ? 0 : Math.min(RESTART_BASE_MS * 2 ** (failures - 2), RESTART_MAX_MS);
}

/**
 * Forks `processes` API children (node:cluster: they share the port, and the primary hands each
 * new connection to the next child in turn) and resolves once all listen. A child that dies
 * before that fails the start: its error is on stderr, and the others are stopped. Afterwards a
 * child that dies is forked again: at once the first time, then with a doubling back-off while
 * its replacements keep dying within STABLE_AFTER_MS, so a crash loop costs little CPU.
 */
export function startApiChildren({ processes, env, logger }: ApiChildrenOptions): Promise<ApiChildren> {
  const slots: Slot[] = Array.from({ length: processes }, (_, i) => ({ index: i + 1, worker: undefined, listening: false, startedAt: 0, failures: 0, timer: undefined }));
  let started = false;
  let stopping = false;

  const children: ApiChildren = {
    listening: () => slots.flatMap((s) => (s.listening && s.worker ? [s.worker] : [])),
    stop: async () => {
      stopping = true;
      for (const slot of slots) clearTimeout(slot.timer);
      const alive = slots.flatMap((s) => (s.worker && !s.worker.isDead() ? [s.worker] : []));
      await Promise.all(
        alive.map(
          (worker) =>
            new Promise<void>((resolve) => {
              worker.once('exit', () => resolve());
              worker.process.kill('SIGTERM');
            }),
        ),
      );
    },
  };

  return new Promise((resolve, reject) => {
    const fork = (slot: Slot): void => {
      slot.timer = undefined;
      const worker = cluster.fork(env);
      slot.worker = worker;
      slot.listening = false;
      slot.startedAt = Date.now();
      worker.once('listening', () => {
        slot.listening = true;
        if (started) logger.info({ slot: slot.index, pid: worker.process.pid }, 'replacement API process listening');
        else if (slots.every((s) => s.listening)) {
          started = true;
          resolve(children);
        }
      });
      worker.once('exit', (code: number | null, signal: string | null) => {
        slot.listening = false;
        if (stopping) return;
        if (!started) {
          reject(new Error(`API process ${slot.index} (pid ${worker.process.pid}) exited (${signal ?? code}) before it listened`));
          void children.stop();
          return;
        }
        slot.failures = Date.now() - slot.startedAt >= STABLE_AFTER_MS ? 1 : slot.failures + 1;
        const delayMs = restartDelayMs(slot.failures);
        logger.error({ slot: slot.index, pid: worker.process.pid, code, signal, restartInMs: delayMs, quickDeathsInARow: slot.failures }, 'API process died; forking a replacement');
        slot.timer = setTimeout(() => fork(slot), delayMs);
      });
    };
    for (const slot of slots) fork(slot);
  });
}
