import Koa from 'koa';
import supertest from 'supertest';
import type { Redis } from 'ioredis';
import { HistoryRecorder } from '../../../src/http/history/history-recorder';
import { observeFinishedRequests } from '../../../src/http/request-observers';
import type { TrackerResolver } from '../../../src/ingest/resolver';
import { waitFor } from '../../helpers/wait';

/**
 * A Redis whose pipelines are recorded and answered when the test releases them; with `hang`,
 * never, as one caught in a dropped connection.
 */
function fakeRedis(hang: boolean) {
  const writes: Array<Array<[string, ...unknown[]]>> = [];
  const held: Array<() => void> = [];
  const redis = {
    pipeline() {
      const commands: Array<[string, ...unknown[]]> = [];
      const p = {
        lpush: (...args: unknown[]) => (commands.push(['lpush', ...args]), p),
        ltrim: (...args: unknown[]) => (commands.push(['ltrim', ...args]), p),
        exec: () => {
          writes.push(commands);
          return new Promise((resolve) => {
            if (!hang) held.push(() => resolve(commands.map(() => [null, 1])));
          });
        },
      };
      return p;
    },
  };
  const release = () => held.splice(0).forEach((answer) => answer());
  return { redis: redis as unknown as Redis, writes, release };
}

function appWith(recorder: HistoryRecorder) {
  const app = new Koa();
  app.use(observeFinishedRequests([recorder]));
  app.use((ctx) => {
    ctx.state.trackerId = 'shop';
    ctx.status = 202;
    ctx.body = { accepted: 1, id: 'x' };
  });
  return supertest(app.callback());
}

const options = { redisPrefix: 'p', resolver: {} as TrackerResolver, size: 3, entryBytes: 1024, unknownSize: 10, unknownPerMinute: 60, acceptedPerSecond: 100 };

test('requests answered while a write is under way go to Redis together in the next pipeline, each list trimmed to its size', async () => {
  const { redis, writes, release } = fakeRedis(false);
  const recorder = new HistoryRecorder({ ...options, redis });
  const http = appWith(recorder);
  // The answers do not wait for Redis: the first write is still unanswered.
  await http.post('/v3/event').expect(202);
  await waitFor(() => writes.length === 1, { message: 'the first write' });
  for (let i = 0; i < 5; i++) await http.post('/v3/event').expect(202);
  expect(writes).toHaveLength(1);
  release();
  await waitFor(() => writes.length === 2, { message: 'the second write' });
  release();
  await recorder.flush();
  // The five queued entries went in one pipeline; the list keeps 3, so only the newest 3 were sent.
  expect(writes.map((w) => w.map(([name, key, ...rest]) => [name, key, rest.length]))).toEqual([
    [['lpush', 'p:requests:shop', 1], ['ltrim', 'p:requests:shop', 2]],
    [['lpush', 'p:requests:shop', 3], ['ltrim', 'p:requests:shop', 2]],
  ]);
  expect(writes[1]![1]).toEqual(['ltrim', 'p:requests:shop', 0, 2]);
});

test('a write Redis never answers is given up after its deadline, so shutdown and later writes do not wait for it', async () => {
  const { redis, writes } = fakeRedis(true);
  const errors: Error[] = [];
  const recorder = new HistoryRecorder({ ...options, redis, writeTimeoutMs: 50, onError: (err) => errors.push(err) });
  const http = appWith(recorder);
  await http.post('/v3/event').expect(202);
  await recorder.flush();
  expect(errors.map((e) => e.message)).toEqual(['no answer from Redis within 50 ms']);
  await http.post('/v3/event').expect(202);
  await recorder.flush();
  expect(writes).toHaveLength(2);
});

test('a tracker keeps its accepted requests within its allowance a second, every refused one, and says how many it skipped', async () => {
  const { redis, writes, release } = fakeRedis(false);
  let now = 1_000_000;
  const recorder = new HistoryRecorder({ ...options, size: 100, acceptedPerSecond: 2, redis, now: () => now });
  const app = new Koa();
  app.use(observeFinishedRequests([recorder]));
  app.use((ctx) => {
    ctx.state.trackerId = 'shop';
    ctx.status = ctx.path.endsWith('bad') ? 400 : 202;
    ctx.body = ctx.status === 400 ? { error: { code: 'ERR_INVALID_JSON', message: 'bad' } } : { accepted: 1, id: 'x' };
  });
  const http = supertest(app.callback());
  for (let i = 0; i < 5; i++) await http.post('/v3/event').expect(202);
  await http.post('/v3/event/bad').expect(400);
  now += 1000;
  await http.post('/v3/event').expect(202);
  const kept = async () => {
    await waitFor(() => writes.length > 0, { message: 'a write' });
    release();
    await recorder.flush();
    return writes.flatMap((w) => w.filter(([name]) => name === 'lpush').flatMap(([, , ...entries]) => entries.map((e) => JSON.parse(String(e)) as { status: number; suppressed?: number })));
  };
  // LPUSH sends the oldest first: two accepted, the refusal, then the next accepted after the second, with the three skipped.
  expect((await kept()).map((e) => [e.status, e.suppressed])).toEqual([
    [202, undefined],
    [202, undefined],
    [400, undefined],
    [202, 3],
  ]);
});
