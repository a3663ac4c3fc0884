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
