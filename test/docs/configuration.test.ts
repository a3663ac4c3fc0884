import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ENV_VARIABLES } from '../../src/core/config';

/**
 * docs/configuration.md is the settings reference: its tables list exactly the environment
 * variables src/core/config.ts reads, plus those the Google client libraries, the PostgreSQL driver
 * and Node read themselves, and
 * each default it gives as a value is the one .env.example sets.
 */
const ROOT = path.join(__dirname, '..', '..');
const LIBRARY_VARIABLES = ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'GOOGLE_APPLICATION_CREDENTIALS', 'PGPASSWORD', 'NODE_EXTRA_CA_CERTS'];

const page = readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
/** `| \`NAME\` | default | what |` rows of the page's tables. */
const rows = [...page.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \|/gm)].map((m) => ({ name: m[1]!, defaultCell: m[2]!.trim() }));

test('lists every variable Tributary reads, and no other', () => {
  const names = rows.map((r) => r.name);
  expect(new Set(names).size).toBe(names.length);
  expect([...names].sort()).toEqual([...ENV_VARIABLES, ...LIBRARY_VARIABLES].sort());
});

test('each default given as a value is the one .env.example sets', () => {
  const example = new Map(
    readFileSync(path.join(ROOT, '.env.example'), 'utf8')
      .split('\n')
      .map((line) => /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, m[2]!.trim()]),
  );
  expect(example.size).toBeGreaterThan(40);
  const compared = rows.filter((r) => example.has(r.name));
  expect(compared.length).toBe(example.size);
  for (const { name, defaultCell } of compared) {
    expect({ name, default: /^`([^`]*)`/.exec(defaultCell)?.[1] }).toEqual({ name, default: example.get(name) });
  }
});
