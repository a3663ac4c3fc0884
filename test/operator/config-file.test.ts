import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigFileError, loadConfigFile, loadDeclaredTrackers, mergeDeclaredTracker } from '../../src/operator/config-file';
import { TrackerSchema } from '../../src/core/trackers/types';

const TOKEN_A = 'trk_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const TOKEN_B = 'trk_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tributary-config-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function file(name: string, text: string): Promise<string> {
  const full = path.join(dir, name);
  await writeFile(full, text);
  return full;
}

async function failure(name: string, text: string): Promise<string> {
  const err = await loadConfigFile(await file(name, text)).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigFileError);
  return (err as Error).message;
}

test('reads JSON and fills in the defaults', async () => {
  const trackers = await loadConfigFile(await file('ok.json', JSON.stringify({ trackers: [{ id: 'shop', name: 'Shop', tokens: [{ token: TOKEN_A }] }] })));
  expect(trackers).toHaveLength(1);
  expect(trackers[0]).toMatchObject({ id: 'shop', timeZone: 'UTC', corsOrigins: ['*'], rateLimit: null, captureContext: false, destinations: [] });
  expect(trackers[0]?.tokens[0]).toMatchObject({ token: TOKEN_A });
});

test.each(['ok.yaml', 'ok.YML'])('reads YAML (%s)', async (name) => {
  const yaml = [
    'trackers:',
    '  - id: shop',
    '    name: Shop',
    '    timeZone: Europe/Paris',
    '    corsOrigins: [https://shop.example]',
    '    rateLimit: { recordsPerSecond: 100, burst: 500 }',
    '    captureContext: true',
    '    tokens:',
    `      - token: ${TOKEN_A}`,
    `      - token: ${TOKEN_B}`,
    '        revokedAt: 2024-01-01T00:00:00Z',
  ].join('\n');
  const [tracker] = await loadConfigFile(await file(name, yaml));
  expect(tracker).toMatchObject({ id: 'shop', timeZone: 'Europe/Paris', corsOrigins: ['https://shop.example'], rateLimit: { recordsPerSecond: 100, burst: 500 }, captureContext: true });
  expect(tracker?.tokens.map((t) => t.revokedAt)).toEqual([undefined, '2024-01-01T00:00:00Z']);
});

test('an empty YAML file declares no trackers', async () => {
  expect(await loadConfigFile(await file('empty.yaml', ''))).toEqual([]);
});

test.each([
  ['bad-zone.yaml', 'trackers.0.timeZone', `trackers:\n  - id: shop\n    name: Shop\n    timeZone: Mars/Olympus\n    tokens: [{ token: ${TOKEN_A} }]\n`],
  ['short-token.json', 'trackers.0.tokens.0.token', JSON.stringify({ trackers: [{ id: 'shop', name: 'Shop', tokens: [{ token: 'short' }] }] })],
  ['no-tokens.json', 'trackers.0.tokens', JSON.stringify({ trackers: [{ id: 'shop', name: 'Shop', tokens: [] }] })],
  ['no-name.json', 'trackers.1.name', JSON.stringify({ trackers: [{ id: 'a', name: 'A', tokens: [{ token: TOKEN_A }] }, { id: 'b', tokens: [{ token: TOKEN_B }] }] })],
  ['bad-id.yaml', 'trackers.0.id', `trackers:\n  - id: Not An Id\n    name: Shop\n    tokens: [{ token: ${TOKEN_A} }]\n`],
  ['bad-rate.json', 'trackers.0.rateLimit.recordsPerSecond', JSON.stringify({ trackers: [{ id: 'a', name: 'A', tokens: [{ token: TOKEN_A }], rateLimit: { recordsPerSecond: -1 } }] })],
  ['dup-id.json', 'trackers.1.id', JSON.stringify({ trackers: [{ id: 'a', name: 'A', tokens: [{ token: TOKEN_A }] }, { id: 'a', name: 'B', tokens: [{ token: TOKEN_B }] }] })],
  ['dup-token.json', 'trackers.1.tokens.0.token', JSON.stringify({ trackers: [{ id: 'a', name: 'A', tokens: [{ token: TOKEN_A }] }, { id: 'b', name: 'B', tokens: [{ token: TOKEN_A }] }] })],
  ['unknown-key.json', 'trakcers', JSON.stringify({ trackers: [], trakcers: [] })],
])('%s: the error names %s', async (name, field, text) => {
  const message = await failure(name, text);
  expect(message).toContain(field);
  expect(message).toContain(name);
});

test('destination rules are read from the file and refused, naming the rule and the column, when wrong', async () => {
  const yaml = (filter: string) =>
    ['trackers:', '  - id: shop', '    name: Shop', `    tokens: [{ token: ${TOKEN_A} }]`, '    destinations:', '      - id: marketing', '        type: local', '        rules:', `          filter: "${filter}"`, '          keep: [total]', '          rename: { total: amount }'].join('\n');
  const [shop] = await loadConfigFile(await file('rules.yaml', yaml("_event in ['signup', 'order']")));
  expect(shop?.destinations[0]?.rules).toEqual({ filter: "_event in ['signup', 'order']", keep: ['total'], rename: { total: 'amount' } });
  expect(await failure('bad-rules.yaml', yaml('_event ==='))).toMatch(/trackers\.0\.destinations\.0\.rules\.filter: at column \d+: /);
});

test('malformed JSON and YAML are reported as such', async () => {
  expect(await failure('broken.json', '{"trackers": [')).toMatch(/broken\.json is not valid JSON/);
  expect(await failure('broken.yaml', 'trackers: [\n  - id: x')).toMatch(/broken\.yaml is not valid YAML/);
});

test('a missing file names the file', async () => {
  const missing = path.join(dir, 'missing.json');
  const err = await loadConfigFile(missing).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigFileError);
  expect((err as Error).message).toContain(`Cannot read TRIBUTARY_CONFIG ${missing}`);
});

describe('mergeDeclaredTracker: the file at start against what Redis holds', () => {
  const declared = (fields: Record<string, unknown>) => ({ tracker: TrackerSchema.parse({ id: 'shop', name: 'Shop', tokens: [{ token: TOKEN_A }], ...fields }), fields: new Set(['id', 'name', 'tokens', ...Object.keys(fields)]) });
  const stored = TrackerSchema.parse({
    id: 'shop',
    name: 'Renamed in the console',
    tokens: [
      { token: TOKEN_A, createdAt: '2026-01-01T00:00:00.000Z', revokedAt: '2026-02-01T00:00:00.000Z' },
      { token: TOKEN_B, createdAt: '2026-01-15T00:00:00.000Z' },
    ],
    timeZone: 'Europe/Paris',
    captureContext: true,
    destinations: [{ id: 'wh', type: 'local' }],
    createdAt: '2026-01-01T00:00:00.000Z',
  });

  test('a new tracker is the declaration as is', () => {
    const d = declared({ timeZone: 'Asia/Tokyo' });
    expect(mergeDeclaredTracker(undefined, d)).toEqual({ tracker: d.tracker, warnings: [] });
  });

  test('stated settings win, unstated ones keep their stored value, createdAt stays', () => {
    const { tracker } = mergeDeclaredTracker(stored, declared({ timeZone: 'Asia/Tokyo' }));
    expect(tracker).toMatchObject({ name: 'Shop', timeZone: 'Asia/Tokyo', captureContext: true, corsOrigins: ['*'], destinations: [{ id: 'wh', type: 'local' }], createdAt: '2026-01-01T00:00:00.000Z' });
    // Stating destinations (even none) is a decision of the file.
    expect(mergeDeclaredTracker(stored, declared({ destinations: [] })).tracker.destinations).toEqual([]);
  });

  test('a token revoked in Redis stays revoked although the file lists it, with a warning', () => {
    const { tracker, warnings } = mergeDeclaredTracker(stored, declared({}));
    expect(tracker.tokens).toEqual(stored.tokens);
    expect(warnings).toEqual([expect.stringContaining('stays revoked: remove it from the file')]);
    expect(warnings[0]).not.toContain(TOKEN_A);
  });

  test('tokens added outside the file stay; a token the file marks revoked is revoked', () => {
    const fresh = { ...stored, tokens: [{ token: TOKEN_A, createdAt: '2026-01-01T00:00:00.000Z' }, { token: TOKEN_B, createdAt: '2026-01-15T00:00:00.000Z' }] };
    const { tracker, warnings } = mergeDeclaredTracker(fresh, declared({ tokens: [{ token: TOKEN_A, revokedAt: '2026-03-01T00:00:00.000Z' }] }));
    expect(tracker.tokens).toEqual([
      { token: TOKEN_A, createdAt: '2026-01-01T00:00:00.000Z', revokedAt: '2026-03-01T00:00:00.000Z' },
      { token: TOKEN_B, createdAt: '2026-01-15T00:00:00.000Z' },
    ]);
    expect(warnings).toEqual([]);
  });

  test('loadDeclaredTrackers says which settings each tracker states', async () => {
    const f = await file('fields.json', JSON.stringify({ trackers: [{ id: 'a', name: 'A', tokens: [{ token: TOKEN_A }], timeZone: 'UTC' }, { id: 'b', name: 'B', tokens: [{ token: TOKEN_B }], destinations: [] }] }));
    const [a, b] = await loadDeclaredTrackers(f);
    expect([...a!.fields].sort()).toEqual(['id', 'name', 'timeZone', 'tokens']);
    expect(b!.fields.has('destinations')).toBe(true);
    expect(b!.fields.has('timeZone')).toBe(false);
  });
});
