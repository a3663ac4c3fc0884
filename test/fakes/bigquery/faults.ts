/**
 * Faults a test switches on for the next matching calls. Each rule fires `times` times (default
 * once; `Infinity` for a storm), for one API method (`tabledata.insertAll`, `jobs.query`…) or `*`.
 */
export type Fault =
  /** Answer with Google's error body instead of handling the call. Nothing is applied. */
  | { kind: 'error'; status: number; reason: string; message?: string }
  /** Handle the call (the write is applied), then reset the connection instead of answering. */
  | { kind: 'lose-response' }
  /** Wait `ms` before handling: a client with a shorter timeout gives up, the call still lands. */
  | { kind: 'delay'; ms: number }
  /** Never answer and apply nothing (until the fake closes): a connection that hangs. */
  | { kind: 'hang' }
  /** jobs.query only: run the statement but answer `jobComplete: false`, as a slow query does; the results wait at jobs.getQueryResults. */
  | { kind: 'incomplete' };

export interface FaultContext {
  method: string;
  /** Path parameters: projectId, datasetId, tableId, jobId, as the call has them. */
  path: Readonly<Record<string, string>>;
  body: Readonly<Record<string, unknown>>;
}

export interface FaultRule {
  method: string;
  fault: Fault;
  times: number;
  /** Only calls for which this returns true; e.g. `(c) => c.path.tableId === 'events'`. */
  when?: (ctx: FaultContext) => boolean;
}

export class Faults {
  private rules: FaultRule[] = [];
  /** How many faults fired, by method. */
  readonly fired: Record<string, number> = {};

  inject(method: string, fault: Fault, opts: { times?: number; when?: FaultRule['when'] } = {}): this {
    this.rules.push({ method, fault, times: opts.times ?? 1, when: opts.when });
    return this;
  }

  /** Shorthands for Google's usual answers. */
  rateLimit(method: string, times = 1, when?: FaultRule['when']): this {
    return this.inject(method, { kind: 'error', status: 403, reason: 'rateLimitExceeded', message: 'Exceeded rate limits: too many api requests per user per method for this user_method. For more information, see https://cloud.google.com/bigquery/docs/troubleshoot-quotas' }, { times, when });
  }

  backendError(method: string, times = 1, when?: FaultRule['when']): this {
    return this.inject(method, { kind: 'error', status: 503, reason: 'backendError', message: 'Error encountered during execution. Retrying may solve the problem.' }, { times, when });
  }

  clear(): void {
    this.rules = [];
  }

  /** The fault for this call, if any rule matches; consumes one of its times. */
  take(ctx: FaultContext): Fault | undefined {
    const rule = this.rules.find((r) => (r.method === '*' || r.method === ctx.method) && r.times > 0 && (!r.when || r.when(ctx)));
    if (!rule) return undefined;
    rule.times--;
    if (rule.times <= 0) this.rules = this.rules.filter((r) => r !== rule);
    this.fired[ctx.method] = (this.fired[ctx.method] ?? 0) + 1;
    return rule.fault;
  }
}
