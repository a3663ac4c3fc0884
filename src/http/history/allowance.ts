/**
 * A token bucket: at most `perInterval` takes per `intervalMs`, refilled continuously, and the
 * count of takes it refused since the last one it allowed, so that a kept entry can say how many
 * were not kept before it.
 */
export class Allowance {
  private tokens: number;
  private refused = 0;

  constructor(
    private readonly perInterval: number,
    private readonly intervalMs: number,
    private refilledAt: number,
  ) {
    this.tokens = perInterval;
  }

  /** Undefined when over the allowance (then counted as refused); else the takes refused since the last allowed one. */
  take(now: number): number | undefined {
    this.tokens = Math.min(this.perInterval, this.tokens + ((now - this.refilledAt) * this.perInterval) / this.intervalMs);
    this.refilledAt = now;
    if (this.tokens < 1) {
      this.refused++;
      return undefined;
    }
    this.tokens--;
    const refused = this.refused;
    this.refused = 0;
    return refused;
  }
}
