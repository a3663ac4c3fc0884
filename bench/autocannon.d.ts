/** The part of autocannon's API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  export interface Client {
    setRequests(requests: Request[]): void;
    /** Internal: what the client sends next. Requests that carry `requestBuffer` are sent as they are. */
    requestIterator: { requests: BuiltRequest[]; currentRequestIndex: number; currentRequest: BuiltRequest };
  }

  /** Internal: a request with the bytes autocannon made of it. */
  export interface BuiltRequest extends Request {
    requestBuffer: Buffer;
  }

  export interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    pipelining?: number;
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
    /** Requests a second over all connections. */
    overallRate?: number;
    method?: string;
    headers?: Record<string, string>;
    requests?: Request[];
    setupClient?: (client: Client) => void;
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
  }

  export interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
  }

  function autocannon(opts: Options, cb: (err: Error | null, result: Result) => void): Instance;
  export default autocannon;
}

/** Internal: how autocannon makes a request's bytes (the package ships no types). */
declare module 'autocannon/lib/httpRequestBuilder' {
  import type { Request } from 'autocannon';
  export default function requestBuilder(defaults: { hostname: string; port: number }): (request: Request) => Buffer | null;
}
