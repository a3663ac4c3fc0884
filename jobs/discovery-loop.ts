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
