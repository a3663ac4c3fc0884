import { keysWith, readJson, writeJson } from './storage';

export type Kind = 'event' | 'user' | 'session';
export type Props = Record<string, unknown>;

/** A record waiting for the relay's answer; `_id` is set when it is created, so a resend is deduplicated. */
export interface Pending {
  k: Kind;
  r: Props & { _id: string };
}

/** What a tab keeps in storage: its records, when it last wrote, and whether it has closed. */
interface Saved {
  t: number;
  c?: 1;
  r: Pending[];
}

/** Records kept at most; past it the oldest go (said on the console), so storage never fills. */
const MAX_PENDING = 1000;
/** Records per request at most (the relay takes 500). */
const MAX_BATCH = 100;
/** Bytes per request at most: what a `keepalive` fetch and `sendBeacon` may carry (64 KiB) with room. */
const MAX_BYTES = 60_000;
/** A queue untouched for this long belongs to a tab that is gone: another tab sends it. */
const ABANDONED_MS = 60_000;
/** The longest wait between retries. */
const MAX_BACKOFF_MS = 30_000;

export interface OutboxOptions {
  /** The relay, without a trailing slash. */
  api: string;
  token: string;
  /** How long a record waits for others to join its batch. */
  flushMs: number;
  /** Whether records may be written to storage (not before consent, in consent mode). */
  mayStore: () => boolean;
  warn: (message: string, detail?: unknown) => void;
}

function bytes(text: string): number {
  return new Blob([text]).size;
}

function parseRetryAfter(header: string | null): number {
  if (header === null) return 0;
  const seconds = Number(header);
  return Number.isFinite(seconds) ? seconds * 1000 : Math.max(0, Date.parse(header) - Date.now()) || 0;
}

/**
 * The records of one tab on their way to the relay. Each is kept in `localStorage` under the tab's
 * own key until the relay answered for it, so a reload, a crash or an offline hour loses nothing;
 * a record sent twice (an answer lost, a beacon on leaving and the resend on the next page) is
 * stored once, by its `_id`. One request is in flight at a time; network errors, 408, 429 and 5xx
 * are retried with backoff (at least `Retry-After`), any other answer settles the batch.
 */
export class Outbox {
  private pending: Pending[] = [];
  private inFlight: Pending[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private failures = 0;
  private retryAt = 0;
  private batchLimit = MAX_BATCH;
  private idle: Array<() => void> = [];
  /** The page is going away (pagehide): what waits went by beacon, nothing more is sent from here. */
  private left = false;
  /**
   * Whether this page has read its tab's stored queue. Until then nothing is written: the stored
   * queue may hold what the previous page of this tab could not send, and writing this page's
   * first record over it lost those records (a page view is added before anything else runs).
   */
  private loaded = false;
  private readonly key: string;
  private readonly prefix: string;

  constructor(
    private readonly opts: OutboxOptions,
    tabId: string,
  ) {
    this.prefix = `trb_q_${opts.token.slice(-8)}_`;
    this.key = this.prefix + tabId;
  }

  /**
   * Takes this tab's records back (a reload, the previous page of the tab), and those of tabs that
   * closed or were abandoned, after what this page holds already.
   */
  restore(): void {
    if (!this.opts.mayStore()) return;
    this.loaded = true;
    const known = new Set(this.pending.map((p) => p.r._id));
    for (const key of keysWith(this.prefix)) {
      const saved = readJson<Saved>(key);
      const mine = key === this.key;
      if (!saved || !(mine || saved.c || Date.now() - saved.t > ABANDONED_MS)) continue;
      for (const p of saved.r || []) {
        if (p && p.r && !known.has(p.r._id)) {
          known.add(p.r._id);
          this.pending.push(p);
        }
      }
      if (!mine) writeJson(key, undefined);
    }
    this.save();
    this.schedule(0);
  }

  add(kind: Kind, record: Pending['r']): void {
    try {
      // A copy as JSON holds it: a circular object or a BigInt cannot be sent, and is said now rather than thrown later.
      this.pending.push({ k: kind, r: JSON.parse(JSON.stringify(record)) as Pending['r'] });
    } catch (err) {
      return this.opts.warn('a record that is not JSON was dropped', err);
    }
    if (this.pending.length > MAX_PENDING) {
      this.pending.splice(0, this.pending.length - MAX_PENDING);
      this.opts.warn(`more than ${MAX_PENDING} records waiting: the oldest were dropped`);
    }
    this.save();
    this.schedule(this.pending.length >= MAX_BATCH ? 0 : this.opts.flushMs);
  }

  /** Forgets every record (opt-out). */
  clear(): void {
    this.pending = [];
    this.save();
  }

  /** Sends now; resolves once nothing waits, or the relay cannot be reached for now. */
  flush(): Promise<void> {
    this.retryAt = 0;
    const done = new Promise<void>((resolve) => this.idle.push(resolve));
    this.schedule(0);
    return done;
  }

  /** The network is back: retry at once. */
  online(): void {
    if (this.retryAt > 0) this.flush();
  }

  /**
   * The page is going away: everything not yet in flight goes by `sendBeacon`, which the browser
   * delivers after the page is gone. It stays in storage, marked as a closed tab's: the next page
   * sends it again and the relay drops what the beacon stored.
   */
  leave(): void {
    let waiting = this.pending.filter((p) => this.inFlight.indexOf(p) < 0);
    while (waiting.length > 0) {
      // A batch is of one kind, so it is not always the first records of the list.
      const batch = this.takeBatch(waiting);
      waiting = waiting.filter((p) => batch.indexOf(p) < 0);
      try {
        navigator.sendBeacon(this.url(batch[0]!.k), this.body(batch));
      } catch {
        // The next page sends it.
      }
    }
    this.left = true;
    this.save(true);
  }

  /**
   * The page came back from the back-forward cache: the queue is this tab's again. The pages shown
   * meanwhile kept their own records under the tab's key; they are taken in, not written over.
   */
  resume(): void {
    this.left = false;
    this.restore();
  }

  private save(closed = false): void {
    if (!this.opts.mayStore() || !this.loaded) return;
    writeJson(this.key, this.pending.length === 0 && !closed ? undefined : closed ? { t: Date.now(), c: 1, r: this.pending } : { t: Date.now(), r: this.pending });
  }

  private url(kind: Kind): string {
    return `${this.opts.api}/v3/${kind}?_token=${encodeURIComponent(this.opts.token)}`;
  }

  private body(batch: Pending[]): string {
    return JSON.stringify(batch.map((p) => p.r));
  }

  /** The first records of one kind, in order, within the limits of a request. */
  private takeBatch(from: Pending[]): Pending[] {
    const kind = from[0]!.k;
    const batch: Pending[] = [];
    let size = 2;
    for (const p of from) {
      if (p.k !== kind) continue;
      size += bytes(JSON.stringify(p.r)) + 1;
      if (batch.length > 0 && (batch.length >= this.batchLimit || size > MAX_BYTES)) break;
      batch.push(p);
    }
    return batch;
  }

  private schedule(ms: number): void {
    if (this.inFlight.length > 0) return;
    const at = Math.max(Date.now() + ms, this.retryAt);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.send();
    }, at - Date.now());
  }

  private settle(): void {
    if (this.pending.length > 0 && this.retryAt === 0) return this.schedule(0);
    this.resolveIdle();
  }

  /** `flush()` callers: nothing more will be sent for now. */
  private resolveIdle(): void {
    for (const resolve of this.idle.splice(0)) resolve();
  }

  private send(): void {
    if (this.inFlight.length > 0) return;
    // Nothing to send, or nothing may be (the page is leaving, no consent yet, opted out).
    if (this.pending.length === 0 || this.left || !this.opts.mayStore()) return this.resolveIdle();
    const batch = this.takeBatch(this.pending);
    this.inFlight = batch;
    const body = this.body(batch);
    // A string body is text/plain: a simple request, so no CORS preflight.
    fetch(this.url(batch[0]!.k), { method: 'POST', body, keepalive: bytes(body) <= MAX_BYTES, credentials: 'omit' })
      .then(async (res) => {
        if (res.status === 408 || res.status === 429 || res.status >= 500) return this.failed(parseRetryAfter(res.headers.get('Retry-After')));
        if (res.status === 413 && batch.length > 1) {
          this.batchLimit = Math.max(1, batch.length >> 1);
          return this.done([]);
        }
        const answer = (await res.json().catch(() => undefined)) as { rejected?: number; error?: unknown } | undefined;
        if (!res.ok || (answer && answer.rejected)) this.opts.warn(`the relay refused records (${res.status})`, answer);
        this.done(batch);
      }, () => this.failed(0))
      .catch(() => this.failed(0));
  }

  private done(settled: Pending[]): void {
    this.pending = this.pending.filter((p) => settled.indexOf(p) < 0);
    this.inFlight = [];
    this.failures = 0;
    this.retryAt = 0;
    this.save();
    this.settle();
  }

  private failed(retryAfterMs: number): void {
    this.inFlight = [];
    const backoff = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** this.failures++) * (0.5 + Math.random() / 2);
    this.retryAt = Date.now() + Math.max(backoff, retryAfterMs);
    this.save();
    this.resolveIdle();
    this.schedule(0);
  }
}
