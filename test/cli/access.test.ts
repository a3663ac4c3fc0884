import { spawn } from 'node:child_process';
import { hostname, userInfo } from 'node:os';
import { accessKeys } from '../../src/core/access/keys';
import { verifyPassword } from '../../src/core/access/passwords';
import { PersonSchema } from '../../src/core/access/people-store';
import { CLI } from '../helpers/entries';
import { TEST_REDIS_URL } from '../helpers/redis';
import { cliFixture } from './run-cli';

const { prefix, redis, cli } = cliFixture('cli-access');

/** The CLI with text on its standard input (a password piped in). */
function runWithInput(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, DATA_DIR: cli.dataDir } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

async function person(email: string) {
  const keys = accessKeys(prefix);
  const id = await redis.hget(keys.emails, email.toLowerCase());
  return PersonSchema.parse(JSON.parse((await redis.hget(keys.people, id!))!));
}

describe('tributary users', () => {
  test('add with a piped password; add with an invitation link; list; set; remove; the last admin stays', async () => {
    const added = await runWithInput(['users', 'add', 'ops@example.com', '--role', 'admin', '--password-stdin'], 'a password from a manager\n');
    expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: '' });
    expect(added.stdout).toContain('Added ops@example.com (admin).');
    expect(await verifyPassword('a password from a manager', (await person('ops@example.com')).passwordHash!)).toBe(true);

    const invited = await cli.ok(['users', 'add', 'analyst@example.com', '--tracker', 'shop=viewer', '--tracker', 'blog=editor']);
    expect(invited).toMatch(/Give analyst@example\.com this link to set a password \(valid until .+, once\):\n {2}http:\/\/localhost:\d+\/admin\/#\/welcome\/[A-Za-z0-9_-]{32}\n/);

    const list = await cli.ok(['users', 'list']);
    expect(list).toMatch(/analyst@example\.com\s+member\s+shop=viewer,blog=editor\s+invited/);
    expect(list).toMatch(/ops@example\.com\s+admin\s+all\s+set/);

    await cli.ok(['users', 'set', 'analyst@example.com', '--tracker', 'shop=editor']);
    expect((await person('analyst@example.com')).trackers).toEqual({ shop: 'editor' });
    const empty = await runWithInput(['users', 'add', 'weak@example.com', '--password-stdin'], '');
    expect(empty).toMatchObject({ code: 1, stdout: '' });
    expect(empty.stderr).toMatch(/^tributary: --password-stdin read no password/);
    const weak = await runWithInput(['users', 'add', 'weak@example.com', '--password-stdin'], 'short\n');
    expect(weak.stderr).toMatch(/^tributary: a password has at least 12 characters\n$/);

    expect(await cli.fails(['users', 'remove', 'ops@example.com'])).toContain('last admin');
    await cli.ok(['users', 'set', 'analyst@example.com', '--email', 'analyst.two@example.com', '--name', 'Ana Lyst']);
    expect(await person('analyst.two@example.com')).toMatchObject({ email: 'analyst.two@example.com', name: 'Ana Lyst', trackers: { shop: 'editor' } });
    expect(await cli.fails(['users', 'set', 'analyst.two@example.com', '--email', 'ops@example.com'])).toContain("ops@example.com is already someone's e-mail.");
    await cli.ok(['users', 'set', 'analyst.two@example.com', '--email', 'analyst@example.com']);
    expect(await cli.ok(['users', 'remove', 'analyst@example.com'])).toBe('Removed analyst@example.com.\n');
    expect(await cli.fails(['users', 'set', 'analyst@example.com', '--role', 'admin'])).toContain('no person analyst@example.com');
  }, 60_000);
});

describe('tributary tokens', () => {
  test('a service token is printed once; the list shows its prefix, never the token; revoked by its prefix', async () => {
    const made = await cli.ok(['tokens', 'add-service', 'ci deploys', '--scope', 'read', '--scope', 'write', '--tracker', 'shop=editor', '--expires-days', '30']);
    const token = /\n {2}(tbs_\S+)\n/.exec(made)![1]!;
    const prefixShown = token.split('_').slice(0, 2).join('_');
    const list = await cli.ok(['tokens', 'list']);
    expect(list).toContain(prefixShown);
    expect(list).toMatch(/ci deploys\s+read,write\s+active/);
    expect(list).not.toContain(token);
    expect(await cli.ok(['tokens', 'revoke', prefixShown])).toBe(`Revoked ${prefixShown} (ci deploys).\n`);
    expect(await cli.ok(['tokens', 'list'])).toMatch(/ci deploys\s+read,write\s+revoked/);
    expect(await cli.fails(['tokens', 'add-service', 'x', '--scope', 'read'])).toContain('needs role admin, or grants');
  }, 30_000);
});

describe('tributary audit', () => {
  test("every change made at the command line is an entry naming the operator and the command, never its arguments' secrets", async () => {
    await cli.ok(['trackers', 'create', '--name', 'Audited Shop', '--id', 'audited']);
    await cli.ok(['sources', 'add', 'audited', '--type', 'hmac', '--header', 'X-Sig', '--secret', 'canary-cli-secret-7']);
    await cli.ok(['break-glass', 'off']);
    await cli.ok(['break-glass', 'on']);
    const entries = JSON.parse(await cli.ok(['audit', '--json', '--limit', '20'])).entries as Array<{ actor: { kind: string; label: string }; action: string; target: Record<string, string>; outcome: string }>;
    const actions = entries.map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['cli trackers create', 'cli sources add', 'cli break-glass', 'cli users add', 'cli tokens revoke']));
    for (const e of entries) expect(e.actor).toEqual({ kind: 'cli', label: `cli ${userInfo().username}@${hostname()}` });
    expect(entries.find((e) => e.action === 'cli sources add')!.target).toEqual({ tracker: 'audited' });
    const exported = await cli.ok(['audit', 'export']);
    expect(exported).not.toContain('canary-cli-secret-7');
    expect(JSON.stringify(entries)).not.toContain('canary-cli-secret-7');
    expect(exported.trim().split('\n').length).toBeGreaterThanOrEqual(entries.length);
    const text = await cli.ok(['audit', '--tracker', 'audited']);
    expect(text).toMatch(/OK {2}cli \S+ {2}cli sources add\n {4}tracker audited sources\[hmac\]: null → \{/);
    // Reading commands write nothing.
    const before = entries.length;
    await cli.ok(['users', 'list']);
    expect((JSON.parse(await cli.ok(['audit', '--json', '--limit', '20'])).entries as unknown[]).length).toBe(before);
  }, 60_000);
});
