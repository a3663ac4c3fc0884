import autocannon, { type BuiltRequest, type Request } from 'autocannon';
import requestBuilder from 'autocannon/lib/httpRequestBuilder';
import { failToParent, tellParent, type Message } from './child';
import { batchBodies, singleBodies } from './events';

/** What the benchmark asks the load generator to do. */
export interface LoadPlan {
  url: string;
  path: string;
  connections: number;
  /** Seconds. */
  duration: number;
  /** Records per request: 1 sends one event object, more sends an array. */
  recordsPerRequest: number;
  /** Header sent with every request, e.g. `Tracker <token>`; none for the baseline. */
  authorization?: string;
  /** Give every request an `Idempotency-Key` of its own (client-keyed records, deduplicated). */
  keyed?: boolean;
  /**
   * With `keyed`: how many keyed requests to build before the load starts, shared among the
   * connections. It must exceed the requests the run sends, or keys come round again and are
   * answered as duplicates (the benchmark's durability check then reports a mismatch).
   */
  keyedRequests?: number;
  /**
   * With `keyed`: the header that carries each request's key. Default `idempotency-key`; another
   * name (which the server ignores) gives a control run whose requests the load generator builds
   * and sends exactly as it does keyed ones.
   */
  keyHeader?: string;
  seed: number;
  /**
   * Requests a second over all connections (autocannon's `overallRate`); none is as fast as the
   * server answers. Each connection sends its share in bursts, so latency read at a fixed rate
   * says more about the bursts than about the server.
   */
  rate?: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Responses read, whatever their status. */
  responses: number;
  total2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
  statusCodes: Record<string, number>;
}

/** Distinct bodies each connection cycles through (each connection starts at its own offset). */
const POOL = 256;

function run(plan: LoadPlan): Promise<LoadResult> {
  const bodies = plan.recordsPerRequest === 1 ? singleBodies(POOL, plan.seed) : batchBodies(POOL / 8, plan.recordsPerRequest, plan.seed);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (plan.authorization) headers.authorization = plan.authorization;
  const requests: Request[] = bodies.map((body) => ({ method: 'POST', path: plan.path, headers, body }));
  // Unique per request of this run: a key seen before would be answered as a duplicate.
  const keyBase = `${plan.seed}-${process.hrtime.bigint().toString(36)}-`;
  const perConnection = Math.ceil((plan.keyedRequests ?? 0) / plan.connections);
  /**
   * Every connection's keyed requests, built before the clock starts: autocannon builds a request
   * without a `setupRequest` once, and one with it on every send, which would cost the load
   * generator (on the same cores as the server) more for keyed runs than for plain ones.
   */
  const keyedRequestsOf = (connection: number, at: number): Request[] =>
    Array.from({ length: perConnection }, (_, i) => {
      const base = requests[(at + i) % requests.length]!;
      return { ...base, headers: { ...headers, [plan.keyHeader ?? 'idempotency-key']: `${keyBase}${connection.toString(36)}-${i.toString(36)}` } };
    });
  /**
   * Their bytes too, with autocannon's own builder and the defaults its clients use: a client
   * given requests by `setRequests` builds them all as it starts, which for a keyed run of 10 s
   * blocked the load generator (and every request in flight) for 2 s inside the measured window.
   */
  const target = new URL(plan.url);
  const build = requestBuilder({ hostname: target.hostname, port: Number(target.port) });
  const builtKeyedRequests: BuiltRequest[][] = plan.keyed
    ? Array.from({ length: plan.connections }, (_, connection) =>
        keyedRequestsOf(connection, (connection * 37) % requests.length).map((request) => ({ ...request, requestBuffer: build(request)! })),
      )
    : [];
  let nextOffset = 0;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: plan.url,
        connections: plan.connections,
        duration: plan.duration,
        timeout: 10,
        ...(plan.rate ? { overallRate: plan.rate } : {}),
        requests,
        setupClient: (client) => {
          const connection = nextOffset++;
          const at = (connection * 37) % requests.length;
          const built = builtKeyedRequests[connection];
          if (built) {
            // What setRequests does, without building the requests again.
            Object.assign(client.requestIterator, { requests: built, currentRequestIndex: 0, currentRequest: built[0]! });
          } else client.setRequests([...requests.slice(at), ...requests.slice(0, at)]);
        },
      },
      (err, r) => {
        if (err) return reject(err);
        const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, s.count]));
        resolve({
          requestsPerSecond: r.requests.average,
          p50: r.latency.p50,
          p90: r.latency.p90,
          p99: r.latency.p99,
          max: r.latency.max,
          responses: r.requests.total,
          total2xx: r['2xx'],
          non2xx: r.non2xx,
          errors: r.errors,
          timeouts: r.timeouts,
          duration: r.duration,
          statusCodes,
        });
      },
    );
  });
}

process.on('message', (msg: Message) => {
  if (msg.type === 'run') {
    run(msg.plan as LoadPlan).then((result) => tellParent({ type: 'result', result: result as unknown as Message[string] }), failToParent);
  } else if (msg.type === 'stop') process.exit(0);
});
tellParent({ type: 'ready' });
