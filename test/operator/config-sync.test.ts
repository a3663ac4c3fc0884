import { AuditLog } from '../../src/core/access/audit-log';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createDefaultRegistry } from '../../connectors';
import { loadConfig } from '../../src/core/config';
import { prepareTrackers } from '../../src/boot/host-setup';
import { createLogger } from '../../src/core/logger';
import { TrackerResolver } from '../../src/ingest/resolver';
import { TrackerService } from '../../src/operator/tracker-service';
import { TrackerStore } from '../../src/core/trackers/store';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

const TOKEN = 'trk_cccccccccccccccccccccccccccccccccccccccccc1';
const prefix = uniquePrefix('config-sync');
const redis = new Redis(TEST_REDIS_URL);
const store = new TrackerStore(redis, prefix);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tributary-config-sync-'));
});
afterAll(async () => {
  redis.disconnect();
  await deletePrefix(prefix);
  await rm(dir, { recursive: true, force: true });
});

test('a restart keeps a token revoked with the CLI and the settings the file does not state', async () => {
  const file = path.join(dir, 'trackers.yaml');
  await writeFile(file, `trackers:\n  - id: shop\n    name: Shop\n    tokens: [{ token: "${TOKEN}" }]\n    timeZone: Europe/Paris\n`);
  const config = loadConfig({ REDIS_PREFIX: prefix, TRIBUTARY_CONFIG: file, DATA_DIR: dir, LOG_LEVEL: 'silent' });
  const start = () => prepareTrackers(store, config, createDefaultRegistry(), createLogger('silent'), new AuditLog(redis, prefix));

  await start();
  // What the file changed is an audit entry by the file, once: a start that changes nothing writes none.
  const byFile = async () => (await new AuditLog(redis, prefix).list({ limit: 10, actor: file })).map((e) => ({ action: e.action, actor: e.actor.kind, objects: e.changes.map((c) => c.object) }));
  expect(await byFile()).toEqual([{ action: 'config-file sync', actor: 'config-file', objects: ['tracker shop'] }]);
  await start();
  expect(await byFile()).toHaveLength(1);
  const service = new TrackerService(store);
  const { token: rotated } = await service.rotateToken('shop');
  await service.revokeToken('shop', TOKEN);
  await service.updateTracker('shop', { captureContext: true, timeZone: 'Asia/Tokyo' });

  await start();
  const tracker = (await store.get('shop'))!;
  expect(tracker.tokens.find((t) => t.token === TOKEN)?.revokedAt).toEqual(expect.any(String));
  expect(tracker.tokens.find((t) => t.token === rotated)?.revokedAt).toBeUndefined();
  expect(await new TrackerResolver(store, 0).resolve(TOKEN)).toBeUndefined();
  expect((await new TrackerResolver(store, 0).resolve(rotated))?.id).toBe('shop');
  // The file states the time zone, not context capture.
  expect(tracker).toMatchObject({ timeZone: 'Europe/Paris', captureContext: true });
  // No demo tracker next to declared ones.
  expect(await store.get('demo')).toBeUndefined();
});

test('a declared tracker whose stored JSON is not a tracker is left as it is, and the others are synced', async () => {
  const own = uniquePrefix('config-sync-unreadable');
  const ownStore = new TrackerStore(redis, own);
  try {
    const file = path.join(dir, 'two.yaml');
    await writeFile(file, `trackers:\n  - id: broken\n    name: Broken\n    tokens: [{ token: "${TOKEN.replace(/1$/, '2')}" }]\n  - id: fine\n    name: Fine\n    tokens: [{ token: "${TOKEN.replace(/1$/, '3')}" }]\n`);
    const hand = JSON.stringify({ id: 'broken', name: 'Broken', tokens: 'edited by hand' });
    await redis.set(`${own}:tracker:broken`, hand);
    await redis.sadd(`${own}:trackers`, 'broken');
    const lines: string[] = [];
    const logger = createLogger('error', { write: (line: string) => void lines.push(line) });
    const config = loadConfig({ REDIS_PREFIX: own, TRIBUTARY_CONFIG: file, DATA_DIR: dir, LOG_LEVEL: 'silent' });
    await prepareTrackers(ownStore, config, createDefaultRegistry(), logger, new AuditLog(redis, own));
    expect((await ownStore.get('fine'))?.name).toBe('Fine');
    expect(await redis.get(`${own}:tracker:broken`)).toBe(hand);
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual([expect.stringMatching(/^tracker broken cannot be read: its stored JSON is not a tracker \(tokens: .+\); the config file's declaration of it was not applied$/)]);
  } finally {
    await deletePrefix(own);
  }
});
