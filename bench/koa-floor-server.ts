import { createServer } from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import { Redis } from 'ioredis';
import { v7 as uuidv7 } from 'uuid';
import { serveForParent } from './child';

/**
 * The floor of Tributary's fixed shape: Koa and @koa/router with the v3 routes, reading the body,
 * parsing the JSON and answering the contract's 202 with a record id, and nothing else: no token,
 * no validation, no Redis. Whatever Tributary does beyond it (authenticate, normalize, store
 * durably, count) costs throughput below this line; what is above it is out of the code's reach.
 *
 * With `FLOOR_REDIS_URL` (and `FLOOR_REDIS_KEY`), each request's body is also written to Redis
 * before the 202, one `XADD` a request (capped, no batching): the floor of any relay whose 2xx
 * means the record is in Redis.
 */
const redisUrl = process.env.FLOOR_REDIS_URL;
const redis = redisUrl ? new Redis(redisUrl, { maxRetriesPerRequest: 1 }) : undefined;
const redisKey = process.env.FLOOR_REDIS_KEY ?? 'bench-floor';

const app = new Koa();
const router = new Router({ prefix: '/v3' });

async function readJson(req: NodeJS.ReadableStream): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  const parsed: unknown = JSON.parse(text);
  if (redis) await redis.xadd(redisKey, 'MAXLEN', '~', '10000', '*', 'r', text);
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
