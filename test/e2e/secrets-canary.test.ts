import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { googleSheetsConnector } from '../../connectors/google-sheets';
import { localConnector } from '../../connectors/local';
import { postgresConnector } from '../../connectors/postgres';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { generateAdminToken } from '../../src/admin/admin-token';
import { DEFAULT_KEY_FILE, KeyFileKeyring } from '../../src/core/secrets/key-file';
import { TrackerStore } from '../../src/core/trackers/store';
import { TrackerSchema } from '../../src/core/trackers/types';
import { cliRunner } from '../cli/run-cli';
import { adminClient, type AdminTestApi } from '../helpers/admin-api';
import { startTestApi } from '../helpers/api';
import { createTestDatabase, asAdmin, TEST_PG, type TestDatabase } from '../helpers/postgres';
import { freePort, OwnRedis } from '../helpers/redis-server';
import { spawnTributary, waitReady, type TributaryProcess } from '../helpers/tributary-process';
import { uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

/**
 * Canary secrets, each a distinctive string, written through every door: the config file, the
 * CLI, the admin API, and a tracker stored plain before encryption existed. Redis is a private
 * redis-server with the append-only file on, written uncompressed (no RDB preamble, no LZF) so that
 * a plain value would be found by a byte search. Afterwards neither the AOF, nor the RDB after
 * SAVE, nor the relay's logs, nor anything under DATA_DIR (the key files included) holds any of
 * them; the relay still reads every one of them in memory.
 */
jest.setTimeout(120_000);

const tag = randomBytes(4).toString('hex');
const canary = (name: string) => `canary-${tag}-${name}`;
const CANARIES = {
  fileSource: canary('config-file-webhook-secret'),
  fileHmac: canary('config-file-hmac-key-0123456789'),
  filePassword: canary('config-file-pg-password'),
  fileUrl: canary('config-file-url-password'),
  cliSource: canary('cli-webhook-secret'),
  cliRotated: canary('cli-webhook-secret-rotated'),
  cliPassword: canary('cli-pg-password'),
  apiSource: canary('api-webhook-secret'),
  apiPem: canary('api-private-key'),
  apiPassword: canary('api-pg-password'),
  legacySource: canary('legacy-plain-webhook-secret'),
  legacyHmac: canary('legacy-plain-hmac-key-0123456'),
};
const CONTROL = canary('control-plain-value');

const prefix = uniquePrefix('canary');
let redis: OwnRedis;
let client: Redis;
let relay: TributaryProcess;
let db: TestDatabase;
const cli = cliRunner(prefix);
const dataDir = cli.dataDir;

beforeAll(async () => {
  redis = await OwnRedis.start(['--rdbcompression', 'no', '--aof-use-rdb-preamble', 'no', '--save', '3600 1']);
  client = new Redis(redis.url);
  db = await createTestDatabase('canary');
});
afterAll(async () => {
  await relay?.stop('SIGKILL');
  client?.disconnect();
  await redis?.destroy();
  cli.cleanup();
  await db?.drop();
});

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

/** Which canaries (by name) appear in the bytes of these files. */
function found(files: string[], values: Record<string, string> = CANARIES): string[] {
  const bytes = files.map((f) => readFileSync(f));
  return Object.entries(values).flatMap(([name, value]) => (bytes.some((b) => b.includes(value)) ? [`${name}`] : []));
}

test('canary secrets written through the config file, the CLI, the admin API and an upgrade are nowhere in plain text', async () => {
  // A tracker stored before encryption existed: sealed at the relay's start.
  await new TrackerStore(client, prefix).create(
    TrackerSchema.parse({ id: 'legacy', name: 'Legacy', tokens: [{ token: 'trk_legacy_public_token_0123456789' }], sources: [{ id: 'github', type: 'github', secret: CANARIES.legacySource }], privacyRules: [{ property: 'email', action: 'hash' }], privacySecret: CANARIES.legacyHmac }),
  );
  await client.set(`${prefix}:control`, CONTROL);

  // The operator's own file, outside DATA_DIR: it holds the canaries, as a config file does.
  const configFile = path.join(mkdtempSync(path.join(tmpdir(), 'tributary-canary-config-')), 'trackers.json');
  const pg = { ...db.settings, host: TEST_PG.host };
  writeFileSync(
    configFile,
    JSON.stringify({
      trackers: [
        {
          id: 'cfg',
          name: 'From the file',
          tokens: [{ token: 'trk_cfg_public_token_0123456789ab' }],
          sources: [{ id: 'github', type: 'github', secret: CANARIES.fileSource }],
          privacyRules: [{ property: 'email', action: 'hash' }],
          privacySecret: CANARIES.fileHmac,
          destinations: [
            { id: 'pg', type: 'postgres', settings: { ...pg, password: CANARIES.filePassword } },
            { id: 'pg-url', type: 'postgres', enabled: false, settings: { url: `postgres://${db.role}:${CANARIES.fileUrl}@${TEST_PG.host}:${TEST_PG.port}/${db.name}` } },
          ],
        },
      ],
    }),
  );
  const port = await freePort();
  relay = spawnTributary('all', { REDIS_URL: redis.url, REDIS_PREFIX: prefix, DATA_DIR: dataDir, PORT: String(port), TRIBUTARY_CONFIG: configFile, LOG_LEVEL: 'debug', DELIVERY_DISCOVER_INTERVAL_MS: '100' });
  await waitReady(port, relay);

  // The CLI, as an operator runs it beside the relay.
  const env = { REDIS_URL: redis.url, DATA_DIR: dataDir };
  const ok = async (args: string[]) => {
    const r = await cli.run(args, env);
    expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
  };
  await ok(['trackers', 'create', '--name', 'From the CLI', '--id', 'cli']);
  await ok(['sources', 'add', 'cli', '--type', 'github', '--secret', CANARIES.cliSource]);
  await ok(['sources', 'rotate-secret', 'cli', 'github', '--secret', CANARIES.cliRotated]);
  await ok(['destinations', 'add', 'cli', '--type', 'postgres', '--disabled', '--setting', `database=${db.name}`, '--setting', `password=${CANARIES.cliPassword}`]);
  await ok(['privacy', 'set', 'cli', 'email', 'hash']);

  // The admin API, on the relay's DATA_DIR (its key file) and Redis.
  const adminToken = generateAdminToken();
  const registry = new ConnectorRegistry([localConnector as Connector, googleSheetsConnector as Connector, postgresConnector as Connector]);
  const api = await startTestApi({ DATA_DIR: dataDir, REDIS_PREFIX: prefix }, {}, redis.url, { token: adminToken, registry });
  try {
    const admin = adminClient({ ...api, adminToken, bearer: `Bearer ${adminToken}`, dataDir } as AdminTestApi);
    const key = { type: 'service_account', client_email: 'writer@project.iam.gserviceaccount.com', private_key: `-----BEGIN PRIVATE KEY-----\n${CANARIES.apiPem}\n-----END PRIVATE KEY-----\n` };
    const calls = [
      await admin.post('/trackers/trk-1/sources', { type: 'hmac', id: 'hmac', secret: CANARIES.apiSource, hmac: { header: 'X-Signature' } }),
      await admin.post('/trackers/trk-1/destinations', { type: 'google-sheets', id: 'sheet', enabled: false, settings: { spreadsheetId: 'abcdefghij0123456789', credentials: key } }),
      await admin.post('/trackers/trk-1/destinations', { type: 'postgres', id: 'pg', enabled: false, settings: { database: db.name, password: CANARIES.apiPassword } }),
      await admin.post('/trackers/trk-1/privacy-rules', { property: 'email', action: 'hash' }),
    ];
    for (const call of calls) expect(call.status).toBeLessThan(300);
    // What the API answers when asked: every tracker, the config file's included, with no secret in it.
    const answers = [await admin.get('/trackers'), await admin.get('/trackers/cfg/destinations'), await admin.get('/trackers/cli/sources')];
    for (const answer of answers) expect(answer.status).toBe(200);
    const text = answers.map((a) => JSON.stringify(a.body)).join('\n');
    expect(Object.entries(CANARIES).filter(([, value]) => text.includes(value))).toEqual([]);
  } finally {
    await api.runtime.close();
  }

  // Records through the relay to PostgreSQL: the worker opened the destination with its password.
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/v3/event`, { method: 'POST', headers: { Authorization: 'Tracker trk_cfg_public_token_0123456789ab', 'Content-Type': 'application/json' }, body: JSON.stringify({ _event: 'canary', email: `a${i}@example.com` }) });
    expect(res.status).toBe(202);
  }
  await waitFor(async () => (await asAdmin((c) => c.query('select count(*)::int as n from cfg.events').then((r) => r.rows[0].n as number).catch(() => 0), db.name)) === 3, { timeoutMs: 30_000, intervalMs: 100, message: '3 events in PostgreSQL' });

  // Every canary is there to be read, by a process holding the key file.
  const keys = new KeyFileKeyring(path.join(dataDir, DEFAULT_KEY_FILE), false);
  const inMemory = JSON.stringify(await new TrackerStore(client, prefix, keys).list());
  expect(Object.entries(CANARIES).filter(([, v]) => !inMemory.includes(v))).toEqual([]);
  const generatedHmac = (await new TrackerStore(client, prefix, keys).get('cli'))!.privacySecret!;

  // The plain text of the legacy tracker leaves the AOF once Redis has rewritten it (asked by the start).
  const aofDir = path.join(redis.dir, 'appendonlydir');
  await waitFor(() => found(filesUnder(aofDir), { legacySource: CANARIES.legacySource, legacyHmac: CANARIES.legacyHmac }).length === 0, { timeoutMs: 20_000, intervalMs: 100, message: 'the AOF rewritten without the legacy plain values' });
  await client.save();
  await relay.stop('SIGTERM');

  const aof = filesUnder(aofDir);
  const rdb = [path.join(redis.dir, 'dump.rdb')];
  const logs = path.join(redis.dir, 'relay.log');
  writeFileSync(logs, relay.output());
  // The search finds plain text where there is some: the control value, in each file.
  expect(found(aof, { CONTROL })).toEqual(['CONTROL']);
  expect(found(rdb, { CONTROL })).toEqual(['CONTROL']);
  const everything = { ...CANARIES, generatedHmac };
  expect({ aof: found(aof, everything), rdb: found(rdb, everything), logs: found([logs], everything), dataDir: found(filesUnder(dataDir), everything) }).toEqual({ aof: [], rdb: [], logs: [], dataDir: [] });
  expect(relay.output()).toContain('encrypted the secrets stored before encryption');
});
