/**
 * A client-side request budget: at most `limit` requests in any 60-second span. Google refills
 * Sheets quotas "every minute" (https://developers.google.com/workspace/sheets/api/limits); a
 * sliding window keeps under the limit whatever minute boundaries Google uses, so the quota is
 * not hit in normal running and a 429 only happens when something else spends the same quota.
 */
export class RequestBudget {
  private readonly stamps: number[] = [];
  private blockedUntil = 0;

  constructor(
    public limit: number,
    private readonly windowMs = 60_000,
  ) {}

  /** Milliseconds until one more request may be sent (0: now). */
  delay(now: number): number {
    while (this.stamps.length > 0 && this.stamps[0]! <= now - this.windowMs) this.stamps.shift();
    const byWindow = this.stamps.length >= this.limit ? this.stamps[this.stamps.length - this.limit]! + this.windowMs : 0;
    return Math.max(0, Math.max(byWindow, this.blockedUntil) - now);
  }

  take(now: number): void {
    this.stamps.push(now);
  }

  /** After a 429: nothing more until `until`, whatever the window says. */
  block(until: number): void {
    this.blockedUntil = Math.max(this.blockedUntil, until);
  }

  /** Requests sent in the 60 seconds before `now`. */
  used(now: number): number {
    return this.stamps.filter((t) => t > now - this.windowMs).length;
  }
}

export interface Budgets {
  read: RequestBudget;
  write: RequestBudget;
}

const shared = new Map<string, Budgets>();

/**
 * The budgets of one credential in this process. Google's per-user quota is per credential, so
 * every destination of this process that uses the same credential draws from the same budget;
 * the lowest configured limit wins.
 */
export function budgetsFor(credential: string, limits: { read: number; write: number }): Budgets {
  let b = shared.get(credential);
  if (!b) {
    b = { read: new RequestBudget(limits.read), write: new RequestBudget(limits.write) };
    shared.set(credential, b);
  }
  b.read.limit = Math.min(b.read.limit, limits.read);
  b.write.limit = Math.min(b.write.limit, limits.write);
  return b;
}
