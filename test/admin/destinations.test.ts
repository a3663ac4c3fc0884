import { existsSync } from 'node:fs';
import path from 'node:path';
import { deliveryKeys, recentRecordsKey } from '../../jobs/delivery/keys';
import { entryFields } from '../../jobs/routing/stream-entries';
import { stringifyExactJson } from '../../src/core/records/exact-json';
import { eventRecord, seedDeadLetters } from '../cli/seed';
import { useAdminApi } from '../helpers/admin-api';

const admin = useAdminApi();

let n = 0;
/** A fresh tracker per test, so tests do not see each other's destinations. */
async function tracker(): Promise<string> {
  return (await admin.api.addTracker({ id: `dest-${++n}` })).tracker.id;
}

const KEY = { type: 'service_account', client_email: 'writer@project.iam.gserviceaccount.com', private_key: '-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n' };
const SHEETS = { spreadsheetId: 'abcdefghij0123456789', credentials: KEY };

describe('POST and GET /trackers/:id/destinations', () => {
  test('adds a destination and lists it with its delivery status', async () => {
    const id = await tracker();
    const added = await admin.post(`/trackers/${id}/destinations`, { type: 'memory', settings: { name: 'm1' } });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ id: 'memory', type: 'memory', enabled: true, settings: { name: 'm1' } });

    const list = await admin.get(`/trackers/${id}/destinations`);
    expect(list.status).toBe(200);
    expect(list.body.destinations).toEqual([expect.objectContaining({ id: 'memory', status: expect.objectContaining({ queued: 0, delivered: 0, deadLettered: 0 }) })]);
  });

  test('an unknown type or a bad setting is refused by name; a taken id is a conflict', async () => {
    const id = await tracker();
    const type = await admin.post(`/trackers/${id}/destinations`, { type: 'carrier-pigeon' });
    expect(type.status).toBe(400);
    expect(type.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'type' });
    const settings = await admin.post(`/trackers/${id}/destinations`, { type: 'memory', settings: { name: 42 } });
    expect(settings.status).toBe(400);
    expect(settings.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'settings.name' });
    await admin.post(`/trackers/${id}/destinations`, { type: 'memory', id: 'one', settings: { name: 'm' } }).expect(201);
    const taken = await admin.post(`/trackers/${id}/destinations`, { type: 'memory', id: 'one', settings: { name: 'm' } });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: 'ERR_ADMIN_CONFLICT', field: 'id' });
  });

  test('an unknown tracker is a 404', async () => {
    expect((await admin.get('/trackers/nope/destinations')).status).toBe(404);
    expect((await admin.post('/trackers/nope/destinations', { type: 'memory', settings: { name: 'm' } })).status).toBe(404);
  });
});

describe('PATCH and DELETE /trackers/:id/destinations/:dest', () => {
  test('disables, then removes a destination', async () => {
    const id = await tracker();
    await admin.post(`/trackers/${id}/destinations`, { type: 'memory', settings: { name: 'm' } }).expect(201);
    const disabled = await admin.patch(`/trackers/${id}/destinations/memory`, { enabled: false });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ id: 'memory', enabled: false, settings: { name: 'm' } });
    // What is still queued for it and its dead letters go with it, so Redis keeps nothing of it.
    const keys = deliveryKeys(admin.api.prefix, { trackerId: id, destinationId: 'memory' });
    await admin.api.runtime.redis.xadd(keys.stream, '*', 'r', JSON.stringify(eventRecord(1)));
    await seedDeadLetters(admin.api.runtime.redis, admin.api.prefix, id, 'memory', [eventRecord(2), eventRecord(3)]);
    const removed = await admin.del(`/trackers/${id}/destinations/memory`);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ removed: 'memory', discarded: { queued: 1, deadLetters: 2 } });
    expect(await admin.api.runtime.redis.exists(keys.stream, keys.deadLetters, keys.status, keys.cursor)).toBe(0);
    const gone = await admin.del(`/trackers/${id}/destinations/memory`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('ERR_ADMIN_NOT_FOUND');
  });

  test('new settings are checked; unknown keys in the body are refused', async () => {
    const id = await tracker();
    await admin.post(`/trackers/${id}/destinations`, { type: 'memory', settings: { name: 'm' } }).expect(201);
    const bad = await admin.patch(`/trackers/${id}/destinations/memory`, { settings: { name: '' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'settings.name' });
    const unknown = await admin.patch(`/trackers/${id}/destinations/memory`, { type: 'local' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'type' });
    expect((await admin.patch(`/trackers/${id}/destinations/nope`, { enabled: true })).status).toBe(404);
  });
});

describe('a pasted service-account key', () => {
  test('is kept in Redis encrypted with the other secrets, never in plain text, a file or an answer; replaced by a new one, gone with its destination', async () => {
    const id = await tracker();
    const added = await admin.post(`/trackers/${id}/destinations`, { type: 'google-sheets', id: 'sheet', settings: { ...SHEETS, spreadsheetId: `https://docs.google.com/spreadsheets/d/${SHEETS.spreadsheetId}/edit#gid=0` } });
    expect(added.status).toBe(201);
    // The address is stored as the id; the key is answered redacted.
    expect(added.body.settings).toEqual({ spreadsheetId: SHEETS.spreadsheetId, credentials: '[redacted]' });
    expect(existsSync(path.join(admin.api.dataDir, 'keys'))).toBe(false);

    const raw = (await admin.api.runtime.redis.get(`${admin.api.prefix}:tracker:${id}`))!;
    expect(raw).not.toContain('PRIVATE KEY');
    expect(raw).not.toContain(KEY.client_email);
    expect(JSON.parse(raw).destinations[0].settings.credentials).toMatch(/^enc:v1:/);
    expect((await admin.api.runtime.store.get(id))!.destinations[0]!.settings.credentials).toEqual(KEY);
    for (const url of [`/trackers/${id}`, '/trackers', `/trackers/${id}/destinations`]) expect(JSON.stringify((await admin.get(url)).body)).not.toContain('PRIVATE KEY');

    // Sent back redacted, as the console does, the stored key stays.
    const edited = await admin.patch(`/trackers/${id}/destinations/sheet`, { settings: { ...added.body.settings, title: 'Shop' } });
    expect(edited.body.settings).toEqual({ spreadsheetId: SHEETS.spreadsheetId, credentials: '[redacted]', title: 'Shop' });
    expect((await admin.api.runtime.store.get(id))!.destinations[0]!.settings.credentials).toEqual(KEY);
    const newKey = { ...KEY, client_email: 'other@project.iam.gserviceaccount.com' };
    await admin.patch(`/trackers/${id}/destinations/sheet`, { settings: { spreadsheetId: SHEETS.spreadsheetId, credentials: newKey } }).expect(200);
    expect((await admin.api.runtime.store.get(id))!.destinations[0]!.settings.credentials).toEqual(newKey);

    await admin.del(`/trackers/${id}/destinations/sheet`).expect(200);
    expect(await admin.api.runtime.redis.get(`${admin.api.prefix}:tracker:${id}`)).not.toContain('enc:v1:');
  });
});

describe('POST /trackers/:id/destinations/test-settings', () => {
  test('tests settings before they are saved, and saves nothing', async () => {
    const id = await tracker();
    const ok = await admin.post(`/trackers/${id}/destinations/test-settings`, { type: 'memory', settings: { name: 'm' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ok: true, notes: ['memory destination m'] });
    const refused = await admin.post(`/trackers/${id}/destinations/test-settings`, { type: 'google-sheets', settings: { spreadsheetId: 'https://example.com/sheet' } });
    expect(refused.status).toBe(200);
    expect(refused.body.ok).toBe(false);
    expect(refused.body.error.message).toMatch(/not the address of a spreadsheet: open the spreadsheet and copy the address/);
    expect((await admin.get(`/trackers/${id}/destinations`)).body.destinations).toEqual([]);
    expect((await admin.post(`/trackers/nope/destinations/test-settings`, { type: 'memory', settings: {} })).status).toBe(404);
  });
});

describe('POST /trackers/:id/destinations/:dest/test', () => {
  test('answers the connector test: the memory destination and a local warehouse under DATA_DIR', async () => {
    const id = await tracker();
    await admin.post(`/trackers/${id}/destinations`, { type: 'memory', settings: { name: 'm' } }).expect(201);
    await admin.post(`/trackers/${id}/destinations`, { type: 'local' }).expect(201);
    const memory = await admin.post(`/trackers/${id}/destinations/memory/test`);
    expect(memory.status).toBe(200);
    expect(memory.body).toEqual({ ok: true, notes: ['memory destination m'] });
    const local = await admin.post(`/trackers/${id}/destinations/local/test`);
    expect(local.status).toBe(200);
    expect(local.body.ok).toBe(true);
  });

  test('an unknown destination is a 404', async () => {
    const id = await tracker();
    expect((await admin.post(`/trackers/${id}/destinations/nope/test`)).status).toBe(404);
  });
});

describe('dead letters', () => {
  async function withDeadLetters(count: number): Promise<{ id: string; base: string }> {
    const id = await tracker();
    await admin.post(`/trackers/${id}/destinations`, { type: 'memory', settings: { name: 'm' } }).expect(201);
    await seedDeadLetters(admin.api.runtime.redis, admin.api.prefix, id, 'memory', Array.from({ length: count }, (_, i) => eventRecord(i + 1)));
    return { id, base: `/trackers/${id}/destinations/memory/dead-letters` };
  }

  test('are listed oldest first, with the total and paging', async () => {
    const { base } = await withDeadLetters(3);
    const res = await admin.get(`${base}?limit=2`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(3);
    expect(res.body.entries).toHaveLength(2);
    expect(res.body.entries[0]).toMatchObject({ record: { id: eventRecord(1).id }, error: { kind: 'permanent', status: 400 } });
    const next = await admin.get(`${base}?after=${res.body.entries[1].entryId}`);
    expect(next.body.entries.map((e: { record: { id: string } }) => e.record.id)).toEqual([eventRecord(3).id]);
    const bad = await admin.get(`${base}?limit=0`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'query.limit' });
  });

  test('replay sends the chosen ones back for delivery; discard drops the rest', async () => {
    const { id, base } = await withDeadLetters(3);
    const [first] = (await admin.get(base)).body.entries as Array<{ entryId: string }>;
    const replayed = await admin.post(`${base}/replay`, { ids: [first!.entryId] });
    expect(replayed.status).toBe(200);
    expect(replayed.body).toEqual({ replayed: 1, destinationEnabled: true });
    expect(await admin.api.runtime.redis.xlen(deliveryKeys(admin.api.prefix, { trackerId: id, destinationId: 'memory' }).stream)).toBe(1);

    const discarded = await admin.post(`${base}/discard`);
    expect(discarded.body).toEqual({ discarded: 2 });
    expect((await admin.get(base)).body).toEqual({ total: 0, entries: [] });
  });

  test('bad entry ids are refused by position; an unknown destination is a 404', async () => {
    const { id, base } = await withDeadLetters(1);
    const bad = await admin.post(`${base}/replay`, { ids: ['1-0', 'nope'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'ids.1' });
    expect((await admin.get(`/trackers/${id}/destinations/nope/dead-letters`)).status).toBe(404);
    expect((await admin.post(`/trackers/${id}/destinations/nope/dead-letters/discard`, {})).status).toBe(404);
  });
});

describe('destination rules over the admin API', () => {
  test('rules are saved with a destination, replaced by PATCH, removed by null, and refused naming the rule', async () => {
    const id = await tracker();
    const added = await admin.post(`/trackers/${id}/destinations`, { type: 'memory', settings: { name: 'm' }, rules: { filter: "_event == 'order'", drop: ['email'] } });
    expect(added.status).toBe(201);
    expect(added.body.rules).toEqual({ filter: "_event == 'order'", drop: ['email'] });
    const bad = await admin.patch(`/trackers/${id}/destinations/memory`, { rules: { filter: "_event == 'order' &&" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'rules.filter', message: expect.stringContaining('at column 21') });
    const replaced = await admin.patch(`/trackers/${id}/destinations/memory`, { rules: { keep: ['total'] } });
    expect(replaced.body.rules).toEqual({ keep: ['total'] });
    const cleared = await admin.patch(`/trackers/${id}/destinations/memory`, { rules: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.rules).toBeUndefined();
  });

  test('preview runs saved or given rules over the last records; big integers come back with every digit', async () => {
    const id = await tracker();
    await admin.post(`/trackers/${id}/destinations`, { type: 'memory', settings: { name: 'm' }, rules: { filter: "_event == 'order'" } }).expect(201);
    const records = [eventRecord(1, { event: 'order', properties: { id: 603851970716743426n } }), eventRecord(2, { event: 'view', properties: {} })];
    await admin.api.runtime.redis.xadd(recentRecordsKey(admin.api.prefix, id), '*', ...entryFields(records.map((r) => stringifyExactJson(r))));
    const saved = await admin.post(`/trackers/${id}/rules/preview`, { destination: 'memory' });
    expect(saved.status).toBe(200);
    expect(saved.text).toContain('"id":603851970716743426');
    expect(saved.body).toMatchObject({ destinationId: 'memory', counts: { examined: 2, delivered: 1, filtered: 1 } });
    const tried = await admin.post(`/trackers/${id}/rules/preview`, { rules: { filter: 'missing > 1' }, limit: 1 });
    expect(tried.body.counts).toEqual({ examined: 1, delivered: 0, filtered: 0, sampled: 0, errors: 1 });
    const refused = await admin.post(`/trackers/${id}/rules/preview`, { rules: { rename: { a: '_uid' } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ field: 'rules.rename.a' });
    expect((await admin.post(`/trackers/${id}/rules/preview`, { destination: 'ghost' })).status).toBe(404);
  });

  test('dead letters holding an integer beyond 2^53 are listed with every digit', async () => {
    const id = await tracker();
    await admin.post(`/trackers/${id}/destinations`, { type: 'memory', settings: { name: 'm' } }).expect(201);
    await seedDeadLetters(admin.api.runtime.redis, admin.api.prefix, id, 'memory', [eventRecord(1, { properties: { id: 603851970716743426n } })]);
    const listed = await admin.get(`/trackers/${id}/destinations/memory/dead-letters`);
    expect(listed.status).toBe(200);
    expect(listed.text).toContain('"id":603851970716743426');
  });
});
