import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

/**
 * /metrics in cluster mode: the API process that is scraped asks the primary, the primary asks
 * every listening API process for its metrics as JSON over IPC and sums them with prom-client's
 * AggregatorRegistry (counters and histograms summed; gauges per their `aggregator`). Not
 * AggregatorRegistry.clusterMetrics(): it also asks a child still starting, which cannot answer
 * yet, and waits 5 s for it; and it keeps no account of a child that dies while asked.
 */
const SCRAPE = 'tributary:metrics:scrape';
const HOST = 'tributary:metrics:host';
const COLLECT = 'tributary:metrics:collect';
const LOCAL = 'tributary:metrics:local';

interface Scrape {
  type: typeof SCRAPE;
  id: number;
}
interface HostAnswer {
  type: typeof HOST;
  id: number;
  text?: string;
  error?: string;
}
interface Collect {
  type: typeof COLLECT;
  id: number;
}
interface LocalAnswer {
  type: typeof LOCAL;
  id: number;
  metrics: object[];
}

function isMessage<T extends { type: string }>(msg: unknown, type: T['type']): msg is T {
  return typeof msg === 'object' && msg !== null && (msg as { type?: unknown }).type === type;
}

/** A message to a child that may have died meanwhile: a failed send is its exit's business. */
function sendTo(worker: Worker, msg: HostAnswer | Collect): void {
  if (worker.isConnected()) worker.send(msg, () => undefined);
}

/**
 * In the primary: answers the API processes' scrapes with the sum over `listening()`, the API
 * processes serving now. A process that exits while asked is left out: its counts are gone.
 * One that does not answer within `timeoutMs` fails the scrape (503) rather than under-count.
 */
export function serveHostMetrics(listening: () => Worker[], timeoutMs = 5000): void {
  let nextId = 0;
  const pending = new Map<number, { worker: Worker; done: (metrics: object[] | undefined, err?: Error) => void }>();

  const collect = (worker: Worker): Promise<object[] | undefined> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => done(undefined, new Error(`API process ${worker.process.pid} sent no metrics within ${timeoutMs} ms`)), timeoutMs);
      function done(metrics: object[] | undefined, err?: Error): void {
        clearTimeout(timer);
        pending.delete(id);
        if (err) reject(err);
        else resolve(metrics);
      }
      pending.set(id, { worker, done });
      sendTo(worker, { type: COLLECT, id });
    });

  const aggregate = async (): Promise<string> => {
    const parts = await Promise.all(listening().map(collect));
    return AggregatorRegistry.aggregate(parts.filter((p): p is object[] => p !== undefined)).metrics();
  };

  cluster.on('message', (worker: Worker, msg: unknown) => {
    if (isMessage<LocalAnswer>(msg, LOCAL)) pending.get(msg.id)?.done(msg.metrics);
    else if (isMessage<Scrape>(msg, SCRAPE)) {
      aggregate().then(
        (text) => sendTo(worker, { type: HOST, id: msg.id, text }),
        (err: Error) => sendTo(worker, { type: HOST, id: msg.id, error: err.message }),
      );
    }
  });
  cluster.on('exit', (worker: Worker) => {
    for (const p of pending.values()) if (p.worker === worker) p.done(undefined);
  });
}

/**
 * In an API process: answers the primary's collections from `registry`, and returns the function
 * /metrics calls to get the whole host's text. Rejects after `timeoutMs` without an answer.
 */
export function createHostMetricsClient(registry: Registry, timeoutMs = 8000): () => Promise<string> {
  let nextId = 0;
  const pending = new Map<number, (answer: HostAnswer) => void>();
  process.on('message', (msg: unknown) => {
    if (isMessage<Collect>(msg, COLLECT)) {
      void registry.getMetricsAsJSON().then((metrics) => process.send?.({ type: LOCAL, id: msg.id, metrics } satisfies LocalAnswer));
    } else if (isMessage<HostAnswer>(msg, HOST)) pending.get(msg.id)?.(msg);
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => settle({ type: HOST, id, error: `the cluster primary did not answer within ${timeoutMs} ms` }), timeoutMs);
      function settle(answer: HostAnswer): void {
        clearTimeout(timer);
        pending.delete(id);
        if (answer.text !== undefined) resolve(answer.text);
        else reject(new Error(answer.error ?? 'no metrics'));
      }
      pending.set(id, settle);
      if (!process.send) settle({ type: HOST, id, error: 'not a cluster child: no IPC channel to a primary' });
      else process.send({ type: SCRAPE, id } satisfies Scrape, undefined, undefined, (err: Error | null) => err && settle({ type: HOST, id, error: err.message }));
    });
}
