import { createServer } from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { v7 as uuidv7 } from 'uuid';
import { sendLargeArgumentsAsBuffers } from '../src/core/redis/large-arguments';
import { serveForParent } from './child';

/**
 * The Koa floor: Koa and @koa/router with the v3 routes, reading the body, parsing the JSON and
 * answering the contract's 202 with a record id, and nothing else: no token, no validation, no
 * Redis. Whatever Tributary does beyond it (authenticate, normalize, store durably, count) costs
 * throughput below this line; what is above it is out of the code's reach.
 *
 * With `FLOOR_REDIS_URL` and `FLOOR_QUEUE_PREFIX`, the shape floor: Tributary's fixed shape and no
 * more. The bodies of the requests that arrive within `FLOOR_LINGER_MS` (1, as ENQUEUE_LINGER_MS)
 * of the first go into one BullMQ job (`Queue.add`, the bodies' text joined), and each request is
 * answered once its job is added: the least a 2xx that means "in a BullMQ queue" costs in this shape.
 */
const redisUrl = process.env.FLOOR_REDIS_URL;
const queuePrefix = process.env.FLOOR_QUEUE_PREFIX;
if ((redisUrl === undefined) !== (queuePrefix === undefined)) throw new Error('FLOOR_REDIS_URL and FLOOR_QUEUE_PREFIX go together');
const store = redisUrl && queuePrefix ? queueWriter(redisUrl, queuePrefix, Number(process.env.FLOOR_LINGER_MS ?? 1)) : undefined;

/** Group commit into one BullMQ queue: the texts given within `lingerMs` of the first go in one job. */
function queueWriter(url: string, prefix: string, lingerMs: number): (text: string) => Promise<void> {
  // Long job texts sent as bytes, as Tributary's producer does (src/core/redis/large-arguments.ts).
  const queue = new Queue('ingest', { connection: sendLargeArgumentsAsBuffers(new Redis(url, { maxRetriesPerRequest: 1 })), prefix });
  let batch: string[] = [];
  let waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];
  const flush = () => {
    const [texts, settle] = [batch, waiters];
    batch = [];
    waiters = [];
    queue.add('ingest', { lines: texts.join('\n') }, { removeOnComplete: true }).then(
      () => settle.forEach((w) => w.resolve()),
      (err: unknown) => settle.forEach((w) => w.reject(err)),
    );
  };
  return (text) =>
    new Promise<void>((resolve, reject) => {
      if (batch.length === 0) setTimeout(flush, lingerMs);
      batch.push(text);
      waiters.push({ resolve, reject });
    });
}

const app = new Koa();
const router = new Router({ prefix: '/v3' });

async function readJson(req: NodeJS.ReadableStream): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  const parsed: unknown = JSON.parse(text);
  if (store) await store(text);
  return parsed;
}

for (const kind of ['user', 'session', 'event']) {
  const answer = async (ctx: Koa.Context) => {
    await readJson(ctx.req);
    ctx.status = 202;
    ctx.body = { accepted: 1, id: uuidv7() };
  };
  router.get(`/${kind}`, answer);
  router.post(`/${kind}`, answer);
  router.get(`/${kind}/tracker.gif`, (ctx) => void (ctx.status = 200));
  router.get(`/${kind}/tracker.js`, (ctx) => void (ctx.status = 200));
}
app.use(router.routes());
app.use(router.allowedMethods());

const server = createServer(app.callback());
serveForParent(server);
