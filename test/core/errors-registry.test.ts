import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CODES } from '../../src/core/errors';

/**
 * The error table of docs/sending-data.md ("Errors") is the documentation of the registry: they
 * must list the same codes with the same statuses.
 */
test('the error table of docs/sending-data.md and the registry agree', () => {
  const page = readFileSync(path.join(__dirname, '..', '..', 'docs', 'sending-data.md'), 'utf8');
  const rows = [...page.matchAll(/^\| (\d{3}) \| `(ERR_[A-Z0-9_]+)` \|/gm)].map((m) => [m[2]!, Number(m[1])] as const);
  const documented = new Map(rows);
  expect(documented.size).toBe(rows.length);
  const registry = new Map(Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status]));
  expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(registry));
});
