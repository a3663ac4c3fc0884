import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { postgresConnector, PostgresSettingsSchema } from '../../../connectors/postgres';
import { ConnectorRegistry } from '../../../connectors/registry';
import type { Connector } from '../../../connectors/types';
import { generateAdminToken } from '../../../src/admin/admin-token';
import { createLogger } from '../../../src/core/logger';
import { TrackerStore } from '../../../src/core/trackers/store';
import { cliRunner } from '../../cli/run-cli';
import { seedTracker } from '../../cli/seed';
import { startTestApi, type TestApi } from '../../helpers/api';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../../helpers/redis';
import { allOk, event } from './pg-fixture';

const parse = (settings: Record<string, unknown>) => PostgresSettingsSchema.safeParse(settings);
const refusal = (settings: Record<string, unknown>) => {
  const result = parse(settings);
  if (result.success) throw new Error(`accepted ${JSON.stringify(settings)}`);
  return result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
};

describe('postgres settings: a connection string is split when saved', () => {
  test.each([
    ['postgres://writer:s3cret@db.example.com:6543/analytics', { host: 'db.example.com', port: 6543, database: 'analytics', user: 'writer', password: 's3cret' }],
    ['postgresql://writer:s3cret@db.example.com/analytics', { host: 'db.example.com', database: 'analytics', user: 'writer', password: 's3cret' }],
    // Percent-encoded as providers write them: @ : / and space in user, password, database.
    ['postgres://me%40corp:p%40ss%3Aw%2Ford%20x@10.0.0.5:5432/my%20db?sslmode=require', { host: '10.0.0.5', port: 5432, database: 'my db', user: 'me@corp', password: 'p@ss:w/ord x', sslmode: 'require' }],
    ['postgres://writer@[::1]:5433/analytics', { host: '::1', port: 5433, database: 'analytics', user: 'writer' }],
    // A Unix socket's directory, as libpq takes it.
    ['postgres:///analytics?host=/var/run/postgresql', { host: '/var/run/postgresql', database: 'analytics' }],
    ['postgresql://writer@/analytics?host=%2Fvar%2Frun%2Fpostgresql', { host: '/var/run/postgresql', database: 'analytics', user: 'writer' }],
    // libpq's prefer and allow fall back to plain text; Tributary asks for TLS or not.
    ['postgres://h/analytics?sslmode=prefer', { host: 'h', database: 'analytics', sslmode: 'disable' }],
    ['postgres://h/analytics?sslmode=verify-full', { host: 'h', database: 'analytics', sslmode: 'verify-full' }],
  ])('%s', (url, expected) => {
    expect(parse({ url })).toEqual({ success: true, data: expected });
  });

  test('settings given beside the url win over its parts; the url itself is not kept', () => {
    const result = parse({ url: 'postgres://a:pa@h1:1111/d1?sslmode=require', host: 'h2', port: 2222, database: 'd2', user: 'b', password: 'pb', sslmode: 'disable', schema: 'shop' });
    expect(result).toEqual({ success: true, data: { host: 'h2', port: 2222, database: 'd2', user: 'b', password: 'pb', sslmode: 'disable', schema: 'shop' } });
    // Saved settings parse to themselves: a second save changes nothing.
    expect(parse(result.data!)).toEqual(result);
  });

  test('refused with what to do: no database, a bad sslmode, another scheme, not a url', () => {
    expect(refusal({ url: 'postgres://writer@db.example.com' })).toBe('database: the database is required: give database, or a url that names one');
    expect(refusal({ host: 'db.example.com' })).toBe('database: the database is required: give database, or a url that names one');
    expect(refusal({ url: 'postgres://h/d?sslmode=sometimes' })).toBe('url: sslmode=sometimes is not one of disable, require, verify-ca, verify-full');
    expect(refusal({ database: 'd', sslmode: 'sometimes' })).toMatch(/^sslmode: .*"disable"\|"require"\|"verify-ca"\|"verify-full"/);
    expect(refusal({ url: 'mysql://h/d' })).toBe('url: a connection string starts with postgres:// or postgresql://, not mysql://');
    expect(refusal({ url: 'db.example.com:5432' })).toMatch(/^url: /);
    expect(refusal({ database: 'd', schema: 'Shop-EU' })).toMatch(/^schema: a schema name of lower-case letters/);
    expect(refusal({ database: 'd', colour: 'blue' })).toMatch(/colour/);
  });

  test('a password, role, database or host given as a number (--setting password=1234) is taken as its digits', () => {
    expect(parse({ database: 2024, user: 42, password: 1234, host: 10 })).toEqual({ success: true, data: { database: '2024', user: '42', password: '1234', host: '10' } });
    expect(refusal({ database: 'd', password: true })).toMatch(/^password: /);
    expect(refusal({ database: 'd', password: null })).toMatch(/^password: /);
  });
});

describe('postgres settings against the server', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('settings');
  });
  afterAll(async () => {
    await db.drop();
  });

  const socket = '/var/run/postgresql';
  (existsSync(socket) ? test : test.skip)('a url naming a Unix socket directory connects through it', async () => {
    const settings = PostgresSettingsSchema.parse({ url: `postgresql://${db.role}@/${db.name}?host=${encodeURIComponent(socket)}`, schema: 'socket' });
    expect(settings.host).toBe(socket);
    const writer = await postgresConnector.open({ trackerId: 'trk', destinationId: 'pg', settings, dataDir: '/nonexistent', logger: createLogger('silent'), now: () => new Date() });
    try {
      const report = await writer.test(new AbortController().signal);
      expect(report?.notes.join(' ')).toContain(`${db.role}@${socket}:5432/${db.name}`);
      expect(allOk(await writer.write([event('a', { via: 'socket' })], new AbortController().signal))).toBe(true);
    } finally {
      await writer.close();
    }
  });
});

describe('postgres settings through the admin API: the password is a secret', () => {
  let api: TestApi;
  let token: string;
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('adminpw');
    token = generateAdminToken();
    api = await startTestApi({ PUBLIC_URL: 'https://track.example' }, {}, undefined, { token, registry: new ConnectorRegistry([postgresConnector as Connector]) });
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });
  const at = (url: string) => `/admin/api/trackers/${api.tracker.id}/destinations${url}`;
  const post = (url: string, body: object) => api.http.post(at(url)).set('Authorization', `Bearer ${token}`).send(body);
  const patch = (url: string, body: object) => api.http.patch(at(url)).set('Authorization', `Bearer ${token}`).send(body);
  const get = (url: string) => api.http.get(at(url)).set('Authorization', `Bearer ${token}`);
  const storedSettings = async (id: string) => (await api.runtime.store.get(api.tracker.id))!.destinations.find((d) => d.id === id)!.settings;

  test('shown as [redacted], kept when [redacted] is sent back, replaced when a new one is', async () => {
    const url = `postgres://${db.role}:s3cret%2Fpw@127.0.0.1:5432/${db.name}`;
    const added = await post('', { type: 'postgres', id: 'pg', settings: { url, schema: 'shop' } });
    expect(added.status).toBe(201);
    expect(added.body.settings).toEqual({ host: '127.0.0.1', port: 5432, database: db.name, user: db.role, password: '[redacted]', schema: 'shop' });
    expect(await storedSettings('pg')).toMatchObject({ password: 's3cret/pw' });
    const listed = await get('');
    expect(JSON.stringify(listed.body)).not.toContain('s3cret');
    expect(listed.body.destinations[0].settings.password).toBe('[redacted]');

    // The console sends back what it was shown, with one setting changed.
    const edited = await patch('/pg', { settings: { ...added.body.settings, schema: 'shop2' } });
    expect(edited.status).toBe(200);
    expect(edited.body.settings).toMatchObject({ password: '[redacted]', schema: 'shop2' });
    expect(await storedSettings('pg')).toMatchObject({ password: 's3cret/pw', schema: 'shop2' });
    await patch('/pg', { settings: { ...added.body.settings, password: 'n3w' } }).expect(200);
    expect(await storedSettings('pg')).toMatchObject({ password: 'n3w' });

    // Test before save, with the saved destination's password filled in for [redacted].
    const tested = await post('/test-settings', { type: 'postgres', id: 'pg', settings: added.body.settings });
    expect(tested.body).toEqual({ ok: true, notes: [expect.stringContaining(`${db.role}@127.0.0.1:5432/${db.name}, schema shop`)] });
    expect(JSON.stringify(tested.body)).not.toContain('n3w');
  });

  test('a url without a database is refused, naming the setting', async () => {
    const refused = await post('', { type: 'postgres', settings: { url: 'postgres://writer:pw@db.example.com' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'settings.database' });
    expect(refused.body.error.message).toContain('the database is required: give database, or a url that names one');
    expect(JSON.stringify(refused.body)).not.toContain(':pw@');
  });
});

describe('postgres settings from the CLI', () => {
  const prefix = uniquePrefix('cli-pg');
  const redis = new Redis(TEST_REDIS_URL);
  const cli = cliRunner(prefix);
  const store = new TrackerStore(redis, prefix, cli.keys);
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('clipw');
    await seedTracker(store, 'shop');
  });
  afterAll(async () => {
    redis.disconnect();
    await deletePrefix(prefix);
    cli.cleanup();
    await db.drop();
  });

  test('a url with a password: JSON shows it redacted; a numeric --setting password is stored as text; the test passes', async () => {
    const out = await cli.ok(['destinations', 'add', 'shop', '--type', 'postgres', '--setting', `url=postgres://${db.role}:s3cret@127.0.0.1:5432/${db.name}`, '--json']);
    expect(out).not.toContain('s3cret');
    expect(JSON.parse(out).settings).toEqual({ host: '127.0.0.1', port: 5432, database: db.name, user: db.role, password: '[redacted]' });
    expect((await store.get('shop'))!.destinations[0]!.settings).toMatchObject({ password: 's3cret' });

    expect(await cli.ok(['destinations', 'update', 'shop', 'postgres', '--setting', 'password=1234'])).not.toContain('1234');
    expect((await store.get('shop'))!.destinations[0]!.settings).toMatchObject({ password: '1234', user: db.role });
    const shown = await cli.ok(['destinations', 'show', 'shop', 'postgres', '--json']);
    expect(shown).not.toContain('1234');
    expect(JSON.parse(shown).settings.password).toBe('[redacted]');

    const tested = JSON.parse(await cli.ok(['destinations', 'test', 'shop', 'postgres', '--json']));
    expect(tested).toEqual({ ok: true, notes: [expect.stringContaining(`schema shop`)] });
  });
});
