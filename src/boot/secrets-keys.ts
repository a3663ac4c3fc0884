import type { Config } from '../core/config';
import type { Logger } from '../core/logger';
import { createRedisClient, type RedisTarget } from '../core/redis/cluster';
import type { KeyFileKeyring } from '../core/secrets/key-file';
import { TrackerStore } from '../core/trackers/store';
import { refuseDroppedKeysInUse, SecretsService } from '../operator/secrets-service';

/**
 * Once per start, before the process serves or delivers, on a connection of its own: the key file
 * read (or made), every stored secret opened — a start is refused, in one line, when one names a key
 * the file does not hold or does not open under it; a tracker whose JSON is not one is logged and
 * the start goes on — then the secrets still plain (stored before
 * encryption) sealed, through the store's compare-and-set, so that processes starting together
 * seal each once.
 */
export async function prepareSecrets(target: RedisTarget, config: Readonly<Config>, keys: KeyFileKeyring, logger: Logger): Promise<void> {
  const redis = createRedisClient(target, 'worker');
  try {
    const store = new TrackerStore(redis, config.redisPrefix, keys);
    const secrets = new SecretsService(store, keys, redis, config.dataDir);
    await keys.keyring();
    if (keys.created) logger.info({ file: keys.file }, 'first start: made the secrets key file; keep it apart from Redis and its backups (docs/operating.md, "Secrets at rest")');
    if (await keys.readableByOthers()) logger.warn({ file: keys.file }, 'the secrets key file can be read by other users: make it mode 0600 or 0400');
    for (const err of await secrets.verify()) logger.error({ trackerId: err.trackerId, reason: err.reason }, `${err.message}; the relay runs the other trackers (docs/operating.md, "Trackers that cannot be read")`);
    await store.checkKeys();
    const sealed = await secrets.sealPlain();
    if (sealed.trackers > 0) {
      logger.info({ trackers: sealed.trackers, keyFiles: sealed.keyFiles, persistence: sealed.persistence }, 'encrypted the secrets stored before encryption (and took in the key files kept under DATA_DIR/keys); Redis was asked to rewrite its files so that their plain text leaves them, but backups taken before still hold it');
    }
  } finally {
    redis.disconnect();
  }
}

/**
 * Reads the key file again every second and on SIGHUP, so that a rotation reaches this process
 * without a restart. A changed file that no longer holds a key some stored secret is under is not
 * taken: the process keeps its keys and logs why (src/operator/secrets-service.ts). Returns what stops it.
 */
export function watchSecretsKeys(keys: KeyFileKeyring, store: TrackerStore, logger: Logger): () => void {
  const stop = keys.watch({
    accept: (next) => refuseDroppedKeysInUse(store, next, keys.source),
    onReload: (keyring) => logger.info({ file: keys.file, currentKeyId: keyring.currentId, keyIds: [...keyring.keys.keys()] }, 'secrets key file reloaded'),
    onError: (message) => logger.error({ file: keys.file }, `secrets key file not reloaded: ${message}`),
  });
  const onHangUp = () => void keys.reloadNow();
  process.on('SIGHUP', onHangUp);
  return () => {
    stop();
    process.off('SIGHUP', onHangUp);
  };
}
