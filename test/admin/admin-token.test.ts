import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ADMIN_TOKEN_FILE, ensureAdminToken } from '../../src/admin/admin-token';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tributary-admin-token-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

test('first start generates a 256-bit token in DATA_DIR/admin-token with mode 0600', async () => {
  const dataDir = path.join(dir, 'data');
  const first = await ensureAdminToken(dataDir, undefined);
  expect(first.source).toBe('generated');
  expect(first.token).toMatch(/^adm_[A-Za-z0-9_-]{43}$/);
  const file = path.join(dataDir, ADMIN_TOKEN_FILE);
  expect(first.file).toBe(file);
  expect((await readFile(file, 'utf8')).trim()).toBe(first.token);
  expect((await stat(file)).mode & 0o777).toBe(0o600);
});

test('later starts reuse the stored token', async () => {
  const first = await ensureAdminToken(dir, undefined);
  const second = await ensureAdminToken(dir, undefined);
  expect(second).toEqual({ token: first.token, source: 'file', file: first.file });
});

test('two processes starting at once end up with one token', async () => {
  const results = await Promise.all([ensureAdminToken(dir, undefined), ensureAdminToken(dir, undefined), ensureAdminToken(dir, undefined)]);
  expect(new Set(results.map((r) => r.token)).size).toBe(1);
  expect(results.filter((r) => r.source === 'generated')).toHaveLength(1);
  expect(await readdir(dir)).toEqual([ADMIN_TOKEN_FILE]);
});

test('ADMIN_TOKEN wins and no file is written', async () => {
  const result = await ensureAdminToken(dir, 'configured-token-of-enough-length');
  expect(result).toEqual({ token: 'configured-token-of-enough-length', source: 'config' });
  await expect(stat(path.join(dir, ADMIN_TOKEN_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
});

test('an empty or short token file is refused with the way out, not replaced silently', async () => {
  await writeFile(path.join(dir, ADMIN_TOKEN_FILE), 'short\n');
  await expect(ensureAdminToken(dir, undefined)).rejects.toThrow(/delete it to have a new one generated, or set ADMIN_TOKEN/);
});
