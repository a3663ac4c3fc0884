import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigFileError, loadConfigFile } from '../../src/trackers/config-file';

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
