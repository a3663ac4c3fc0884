/** The API methods the fake serves, named as in the googleapis client. */
export const SHEETS_METHODS = [
  'spreadsheets.get',
  'spreadsheets.create',
  'spreadsheets.batchUpdate',
  'values.get',
  'values.batchGet',
  'values.update',
  'values.batchUpdate',
  'values.append',
  'values.clear',
] as const;
export type SheetsMethod = (typeof SHEETS_METHODS)[number];

/**
 * A fault for the next matching request:
 * - `status`: answer this error (Google's error body) without applying anything: 400
 *   INVALID_ARGUMENT (the request's values refused), 429 RESOURCE_EXHAUSTED (a per-minute quota
 *   spent by someone else), or a 5xx;
 * - `hang`: never answer (until the fake closes), to exercise client timeouts;
 * - `lose-response`: apply the request, then destroy the socket, as when a response is lost on
 *   the way back: the client cannot tell whether the write landed;
 * - `apply-late`: hold the request without answering, apply it `afterMs` later, then destroy the
 *   socket: Google completing a call its client gave up on (past its timeout) and retried meanwhile.
 */
export type Fault = { kind: 'status'; status: 400 | 429 | 500 | 502 | 503 | 504 } | { kind: 'hang' } | { kind: 'lose-response' } | { kind: 'apply-late'; afterMs: number };

interface Armed {
  fault: Fault;
  method: SheetsMethod | undefined;
  remaining: number;
}

export class FaultPlan {
  private armed: Armed[] = [];

  /** Arms a fault for the next `times` requests (of `method`, when given). */
  add(fault: Fault, opts: { method?: SheetsMethod; times?: number } = {}): void {
    this.armed.push({ fault, method: opts.method, remaining: opts.times ?? 1 });
  }

  /** The fault for this request, consumed; undefined when none applies. */
  take(method: SheetsMethod): Fault | undefined {
    const i = this.armed.findIndex((a) => a.method === undefined || a.method === method);
    if (i < 0) return undefined;
    const armed = this.armed[i]!;
    if (--armed.remaining <= 0) this.armed.splice(i, 1);
    return armed.fault;
  }

  clear(): void {
    this.armed = [];
  }

  get pending(): number {
    return this.armed.reduce((n, a) => n + a.remaining, 0);
  }
}

export const isWrite = (m: SheetsMethod) => !(m === 'spreadsheets.get' || m === 'values.get' || m === 'values.batchGet');
