import type { Logger } from '../../src/core/logger';
import type { TrackerStore } from '../../src/core/trackers/store';
import type { Tracker } from '../../src/core/trackers/types';

/**
 * Runs `discover` now and then every `intervalMs`, one run at a time; `wake()` runs it at once (a
 * tracker changed: src/core/trackers/changes.ts), or right after the run under way when one is.
 * What the delivery and archive supervisors use to keep their runs in step with the trackers.
 */
export class DiscoveryLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** A wake arrived during a run: another follows it at once. */
  private woken = false;
  private stopped = false;

  constructor(
    private readonly discover: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly onError: (err: Error) => void,
  ) {}

  start(): void {
    this.tick();
  }

  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.woken = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.tick();
  }

  /** No run starts after this; resolves once the run under way, if any, has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private readonly tick = (): void => {
    if (this.stopped) return;
    this.timer = undefined;
    this.running = this.discover()
      .catch((err: unknown) => this.onError(err as Error))
      .finally(() => {
        this.running = undefined;
        if (this.woken) {
          this.woken = false;
          this.tick();
        } else if (!this.stopped) this.timer = setTimeout(this.tick, this.intervalMs);
      });
  };
}

/** What a lease supervisor runs under each lease it holds. */
export interface LeasedRun {
  stop: AbortController;
  done: Promise<void>;
}

/**
 * What the delivery and archive supervisors share: runs by key, each under a lease, kept in step
 * with the trackers by a DiscoveryLoop; stopping lets every run finish what it holds.
 */
export abstract class LeaseSupervisor<R extends LeasedRun> {
  protected readonly running = new Map<string, R>();
  protected stopped = false;
  private readonly loop: DiscoveryLoop;
  /** Each unreadable tracker's reason as last logged: logged once, and again when it changes. */
  private readonly unreadableLogged = new Map<string, string>();

  constructor(
    intervalMs: number,
    private readonly log: Pick<Logger, 'warn' | 'error' | 'info'>,
    private readonly what: string,
  ) {
    this.loop = new DiscoveryLoop(() => this.discover(), intervalMs, (err) => log.warn({ err: err.message }, `${what} discovery failed`));
  }

  /** Starts, stops and restarts runs to match the trackers. */
  protected abstract discover(): Promise<void>;

  /**
   * The trackers to run for, and whether a run's key (`<tracker>/…`) belongs to a tracker that
   * cannot be read now. Such runs are left as they are, neither stopped nor started: a tracker that
   * cannot be read was not deleted (and a removed destination's run deletes its spool), and one bad
   * tracker must not stop the others.
   */
  protected async readTrackers(store: TrackerStore): Promise<{ trackers: Tracker[]; unreadable: (key: string) => boolean }> {
    const { trackers, unreadable } = await store.list();
    const ids = new Set(unreadable.map((u) => u.id));
    for (const { id, reason } of unreadable) {
      if (this.unreadableLogged.get(id) === reason) continue;
      this.unreadableLogged.set(id, reason);
      this.log.error({ trackerId: id, reason }, `tracker ${id} cannot be read; its ${this.what} runs are left as they are until it can`);
    }
    for (const id of this.unreadableLogged.keys()) {
      if (ids.has(id)) continue;
      this.unreadableLogged.delete(id);
      this.log.info({ trackerId: id }, `tracker ${id} can be read again (or is gone)`);
    }
    return { trackers, unreadable: (key) => ids.has(key.slice(0, key.indexOf('/'))) };
  }

  start(): void {
    this.loop.start();
  }

  /** A tracker changed (src/core/trackers/changes.ts): discover now rather than at the next interval. */
  wake(): void {
    this.loop.wake();
  }

  /** Stops every run: each finishes what it holds (a write, a frame), then releases its lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop.stop();
    for (const r of this.running.values()) r.stop.abort(new Error('stopping'));
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  /** The keys of the runs this process holds right now. */
  leading(): string[] {
    return [...this.running.keys()];
  }
}
