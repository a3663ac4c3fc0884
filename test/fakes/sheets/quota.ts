import { quotaExceeded, type GoogleApiError } from './errors';

export type RequestKind = 'read' | 'write';

/** Per-minute request quotas, Google's defaults (https://developers.google.com/workspace/sheets/api/limits). */
export interface QuotaLimits {
  /** Default 60. */
  writePerMinutePerUser: number;
  /** Default 300. */
  writePerMinutePerProject: number;
  /** Default 60. */
  readPerMinutePerUser: number;
  /** Default 300. */
  readPerMinutePerProject: number;
}

export const GOOGLE_QUOTAS: QuotaLimits = { writePerMinutePerUser: 60, writePerMinutePerProject: 300, readPerMinutePerUser: 60, readPerMinutePerProject: 300 };

interface Window {
  minute: number;
  read: number;
  write: number;
}

/**
 * "Sheets API has per-minute quotas, and they're refilled every minute": fixed windows on the
 * fake's clock, per credential and per project. A refused request is not counted.
 */
export class QuotaMeter {
  private readonly windows = new Map<string, Window>();
  /** Accepted requests per credential and minute, for tests to check the quota was never exceeded. */
  readonly history = new Map<string, Map<number, Window>>();

  constructor(
    public limits: QuotaLimits,
    private readonly project: string,
  ) {}

  private window(key: string, minute: number): Window {
    let w = this.windows.get(key);
    if (!w || w.minute !== minute) {
      w = { minute, read: 0, write: 0 };
      this.windows.set(key, w);
      let perMinute = this.history.get(key);
      if (!perMinute) this.history.set(key, (perMinute = new Map()));
      perMinute.set(minute, w);
    }
    return w;
  }

  /** Counts a request, or returns the 429 to answer. */
  take(credential: string, kind: RequestKind, nowMs: number): GoogleApiError | undefined {
    const minute = Math.floor(nowMs / 60_000);
    const user = this.window(`user:${credential}`, minute);
    const project = this.window('project', minute);
    const l = this.limits;
    const [userMax, projectMax] = kind === 'write' ? [l.writePerMinutePerUser, l.writePerMinutePerProject] : [l.readPerMinutePerUser, l.readPerMinutePerProject];
    const label = kind === 'write' ? 'Write' : 'Read';
    if (project[kind] >= projectMax) return quotaExceeded(label, 'project', this.project);
    if (user[kind] >= userMax) return quotaExceeded(label, 'user', this.project);
    user[kind]++;
    project[kind]++;
    return undefined;
  }

  /** Most accepted requests of a kind in any one minute, for a credential. */
  peak(credential: string, kind: RequestKind): number {
    let peak = 0;
    for (const w of this.history.get(`user:${credential}`)?.values() ?? []) peak = Math.max(peak, w[kind]);
    return peak;
  }
}

/** A clock a test moves by hand, so quota windows pass without waiting a minute. */
export class ManualClock {
  constructor(private ms = Date.UTC(2026, 10, 22, 12, 0, 0)) {}
  now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
}
