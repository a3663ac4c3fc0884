import { Redis } from 'ioredis';
import { queuedRecordsKey } from '../../jobs/routing/ingest-job';
import { startTestApi, type TestApi } from '../helpers/api';
import { OwnRedis } from '../helpers/redis-server';
import { waitFor } from '../helpers/wait';

/**
 * REDIS_ACK_REPLICAS=1 against a master and a replica of the test's own: a 2xx only once the
 * replica has the write; with the replica gone, a 503 with Retry-After within the ack timeout;
 * with it back, 2xx again, and a keyed retry of the refused request is not stored twice.
 */
jest.setTimeout(60_000);

let master: OwnRedis;
let replica: OwnRedis;
let api: TestApi;

const connectedReplicas = async (url: string) => {
  const r = new Redis(url);
  try {
    // Attached and in sync (a replica still loading the first copy does not acknowledge writes).
    return (await r.info('replication')).split('\n').filter((line) => /^slave\d+:.*state=online/.test(line)).length;
  } finally {
    r.disconnect();
  }
};

/** The replica is in sync and acknowledges writes (the first ones after a full copy can take a moment). */
async function replicaAcknowledging(): Promise<void> {
  await waitFor(async () => (await connectedReplicas(master.url)) === 1, { message: 'replica attached' });
  const probe = new Redis(master.url);
  try {
    await waitFor(async () => {
      await probe.set('probe', '1');
      return (await probe.wait(1, 200)) === 1;
    }, { message: 'replica acknowledging' });
  } finally {
    probe.disconnect();
  }
}

beforeAll(async () => {
  // The first copy goes to a replica at once rather than after diskless sync's 5 s delay.
  master = await OwnRedis.start(['--repl-diskless-sync-delay', '0']);
  replica = await OwnRedis.start(['--replicaof', '127.0.0.1', String(master.port)]);
  await replicaAcknowledging();
  api = await startTestApi({ REDIS_ACK_REPLICAS: '1', REDIS_ACK_TIMEOUT_MS: '300' }, {}, master.url);
});
afterAll(async () => {
  await api?.close();
  await replica?.destroy();
  await master?.destroy();
});

const post = (body: unknown) => api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send(body as object);

test('a 2xx means the replica has the records too', async () => {
  const res = await post({ _event: 'replicated', _id: 'r-1' });
  expect(res.status).toBe(202);
  // WAIT returned: the replica already holds the job and its records, without waiting any further.
  const onReplica = new Redis(replica.url);
  try {
    const keys = await onReplica.keys(`${api.prefix}:ingest:*`);
    const jobs = keys.filter((k) => /:\d+$/.test(k));
    expect(jobs).toHaveLength(1);
    expect(await onReplica.hget(jobs[0]!, 'data')).toContain('"n":1');
    expect(await onReplica.get(queuedRecordsKey(jobs[0]!))).toContain('"r-1"');
  } finally {
    onReplica.disconnect();
  }
});

test('without the replica, 503 with Retry-After once the ack timeout passes; with it back, 2xx', async () => {
  await replica.stop('SIGKILL');
  await waitFor(async () => (await connectedReplicas(master.url)) === 0, { message: 'replica gone' });
  const started = performance.now();
  const refused = await post({ _event: 'unreplicated', _id: 'r-2' });
  expect(refused.status).toBe(503);
  expect(refused.headers['retry-after']).toBeDefined();
  expect(refused.body.error.message).toContain('replica');
  expect(performance.now() - started).toBeGreaterThanOrEqual(250);

  await replica.resume();
  await replicaAcknowledging();
  // The refused write did reach the master: its retry succeeds as a duplicate, and is not stored twice.
  const retried = await post({ _event: 'unreplicated', _id: 'r-2' });
  expect(retried.status).toBe(200);
  expect(retried.body).toEqual({ accepted: 0, duplicate: true, id: 'r-2' });
  expect((await post({ _event: 'replicated-again' })).status).toBe(202);
});
