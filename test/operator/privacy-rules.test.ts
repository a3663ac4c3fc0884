import { AuditLog } from '../../src/core/access/audit-log';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createDefaultRegistry } from '../../connectors';
import { prepareTrackers } from '../../src/boot/host-setup';
import { loadConfig } from '../../src/core/config';
import { createLogger } from '../../src/core/logger';
import { TrackerStore } from '../../src/core/trackers/store';
import { ConfigFileError, loadDeclaredTrackers } from '../../src/operator/config-file';
import { TrackerService, TrackerServiceError } from '../../src/operator/tracker-service';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

const prefix = uniquePrefix('privacy');
const redis = new Redis(TEST_REDIS_URL);
const store = new TrackerStore(redis, prefix);
const service = new TrackerService(store);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tributary-privacy-'));
});
afterAll(async () => {
  redis.disconnect();
  await deletePrefix(prefix);
  await rm(dir, { recursive: true, force: true });
});

async function refusal(run: () => Promise<unknown>): Promise<TrackerServiceError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TrackerServiceError);
  return err as TrackerServiceError;
}

test('a tracker gets its HMAC secret with its first hash rule, and keeps it', async () => {
  const { tracker } = await service.createTracker({ name: 'Plain' });
  expect(tracker.privacySecret).toBeUndefined();
  const dropped = await service.setPrivacyRule(tracker.id, { property: 'password', action: 'drop' });
  expect(dropped.privacySecret).toBeUndefined();
  const hashed = await service.setPrivacyRule(tracker.id, { property: 'email', action: 'hash' });
  expect(hashed.privacySecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect((await store.get(tracker.id))!.privacySecret).toBe(hashed.privacySecret);
  const changed = await service.setPrivacyRule(tracker.id, { property: 'email', action: 'mask-email' });
  expect(changed.privacyRules).toEqual([
    { property: 'password', action: 'drop' },
    { property: 'email', action: 'mask-email' },
  ]);
  const removed = await service.removePrivacyRule(tracker.id, 'password');
  expect(removed.privacyRules).toEqual([{ property: 'email', action: 'mask-email' }]);
  expect(removed.privacySecret).toBe(hashed.privacySecret);
});

test('created with hash rules: the secret comes with the tracker', async () => {
  const { tracker } = await service.createTracker({ name: 'Hashed', privacyRules: [{ property: '_uid', action: 'hash' }] });
  expect(tracker.privacySecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect((await store.get(tracker.id))!.privacySecret).toBe(tracker.privacySecret);
});

test('invalid rules are refused with the rule named', async () => {
  const { tracker } = await service.createTracker({ name: 'Refusals' });
  const reserved = await refusal(() => service.setPrivacyRule(tracker.id, { property: '_event', action: 'drop' }));
  expect(reserved).toMatchObject({ code: 'INVALID_INPUT', field: 'privacyRules.0.property', message: expect.stringContaining('rule _event → drop: _event is a reserved field') });
  const action = await refusal(() => service.setPrivacyRule(tracker.id, { property: 'email', action: 'encrypt' as never }));
  expect(action).toMatchObject({ code: 'INVALID_INPUT', field: 'action' });
  const list = await refusal(() => service.updateTracker(tracker.id, { privacyRules: [{ property: 'email', action: 'hash' }, { property: '/email', action: 'drop' }] }));
  expect(list).toMatchObject({ field: 'privacyRules.1.property', message: expect.stringContaining('rule 0 already applies to /email') });
  const missing = await refusal(() => service.removePrivacyRule(tracker.id, 'email'));
  expect(missing).toMatchObject({ code: 'RULE_NOT_FOUND', message: expect.stringContaining('no personal-data rule for email') });
});

test('the config file sets rules; a stored secret is kept unless the file states one', async () => {
  const file = path.join(dir, 'trackers.yaml');
  const token = 'trk_pppppppppppppppppppppppppppppppppppppppppp1';
  const config = loadConfig({ REDIS_PREFIX: prefix, TRIBUTARY_CONFIG: file, DATA_DIR: dir, LOG_LEVEL: 'silent' });
  const start = () => prepareTrackers(store, config, createDefaultRegistry(), createLogger('silent'), new AuditLog(redis, prefix));

  await writeFile(file, `trackers:\n  - id: from-file\n    name: From file\n    tokens: [{ token: "${token}" }]\n    privacyRules:\n      - { property: email, action: hash }\n      - { property: /address/street, action: drop }\n`);
  await start();
  const first = (await store.get('from-file'))!;
  expect(first.privacyRules).toEqual([
    { property: 'email', action: 'hash' },
    { property: '/address/street', action: 'drop' },
  ]);
  expect(first.privacySecret).toMatch(/^[A-Za-z0-9_-]{43}$/);

  await start();
  expect((await store.get('from-file'))!.privacySecret).toBe(first.privacySecret);

  const shared = 'a-secret-shared-with-the-data-team-0123456789';
  await writeFile(file, `trackers:\n  - id: from-file\n    name: From file\n    tokens: [{ token: "${token}" }]\n    privacySecret: ${shared}\n    privacyRules: [{ property: email, action: hash }]\n`);
  await start();
  expect((await store.get('from-file'))!).toMatchObject({ privacySecret: shared, privacyRules: [{ property: 'email', action: 'hash' }] });

  await writeFile(file, `trackers:\n  - id: bad\n    name: Bad\n    tokens: [{ token: "${token.replace('1', '2')}" }]\n    privacyRules: [{ property: _sid, action: drop }]\n`);
  await expect(loadDeclaredTrackers(file)).rejects.toThrow(ConfigFileError);
  await expect(loadDeclaredTrackers(file)).rejects.toThrow(/trackers\.0\.privacyRules\.0\.property: rule _sid → drop: _sid takes hash, not drop/);
});
