import { Argument, InvalidArgumentError, Option, type Command } from 'commander';
import { currentActor } from '../core/access/audit-context';
import { AuditLog, type AuditEntry } from '../core/access/audit-log';
import type { ApiTokenView } from '../core/access/api-token-store';
import type { PersonView } from '../core/access/people-store';
import { TOKEN_SCOPES, TRACKER_ROLES, type TrackerRole } from '../core/access/roles';
import { AccessService, type Invitation } from '../operator/access-service';
import { CliError, withContext, type CliContext } from './context';
import { json, table } from './render';

interface JsonFlag {
  json?: boolean;
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** The people, tokens and roles of the relay the command talks to (src/operator/access-service.ts). */
export function accessOf(ctx: CliContext): AccessService {
  return new AccessService(ctx.redis, ctx.config.redisPrefix, ctx.config.publicUrl);
}

/** `shop=editor` → ['shop', 'editor']. */
function grant(text: string, all: Record<string, TrackerRole> = {}): Record<string, TrackerRole> {
  const m = /^([a-z0-9][a-z0-9_-]{0,62})=(viewer|editor)$/.exec(text);
  if (!m) throw new InvalidArgumentError(`"${text}" is not a grant: write <tracker>=<${TRACKER_ROLES.join('|')}>, e.g. shop=viewer`);
  return { ...all, [m[1]!]: m[2] as TrackerRole };
}

function collect(value: string, all: string[] = []): string[] {
  return [...all, value];
}

/** A password from standard input (piped, never an argument: arguments land in shell histories and `ps`). */
async function readPassword(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const password = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (password === '') throw new CliError('--password-stdin read no password: pipe one in (e.g. from a password manager).');
  return password;
}

async function personFor(access: AccessService, who: string): Promise<PersonView> {
  const person = who.includes('@') ? await access.people.byEmail(who) : await access.people.get(who);
  if (!person) throw new CliError(`no person ${who}; tributary users list shows everyone.`);
  return (await access.listPeople()).find((p) => p.id === person.id)!;
}

function renderPeople(people: PersonView[]): string {
  if (people.length === 0) return 'No people yet: the first admin signs in to the console with the admin token, or run tributary users add <email> --role admin.';
  return table([['EMAIL', 'ROLE', 'TRACKERS', 'PASSWORD', 'ID'], ...people.map((p) => [p.email, p.role, p.role === 'admin' ? 'all' : Object.entries(p.trackers).map(([t, r]) => `${t}=${r}`).join(',') || '-', p.hasPassword ? 'set' : 'invited', p.id])]);
}

function renderInvitation(email: string, invitation: Invitation): string {
  return `Give ${email} this link to set a password (valid until ${invitation.expiresAt}, once):\n  ${invitation.url}`;
}

function renderTokens(tokens: ApiTokenView[]): string {
  if (tokens.length === 0) return 'No tokens.';
  return table([['PREFIX', 'KIND', 'NAME', 'SCOPES', 'STATE', 'EXPIRES', 'LAST USED'], ...tokens.map((t) => [t.prefix, t.kind, t.name, t.scopes.join(','), t.state, t.expiresAt.slice(0, 10), t.lastUsedAt ?? 'never'])]);
}

function renderAudit(entries: AuditEntry[]): string {
  if (entries.length === 0) return 'No audit entries match.';
  return entries
    .map((e) => {
      const head = `${e.at}  ${e.outcome.toUpperCase()}${e.status ? ` ${e.status}` : ''}  ${e.actor.label}${e.from ? ` from ${e.from}` : ''}  ${e.action}`;
      const fields = e.changes.flatMap((c) => c.fields.map((f) => `    ${c.object} ${f.path}: ${JSON.stringify(f.before ?? null)} → ${JSON.stringify(f.after ?? null)}`));
      return [head, ...(e.reason ? [`    ${e.reason}`] : []), ...fields].join('\n');
    })
    .join('\n');
}

export function registerAccessCommands(program: Command): void {
  const users = program.command('users').description('people who sign in to the console, and their roles (docs/access.md)');

  users
    .command('list')
    .description('everyone with an account')
    .option('--json', 'print JSON')
    .action(async (opts: JsonFlag) =>
      withContext(async (ctx) => {
        const people = await accessOf(ctx).listPeople();
        print(opts.json ? json({ people }) : renderPeople(people));
      }),
    );

  users
    .command('add')
    .description('add a person; prints a link to set their password (or set it now with --password-stdin)')
    .argument('<email>', 'their e-mail, with which they sign in')
    .option('--name <name>', 'their name')
    .addOption(new Option('--role <role>', 'admin: everything; member: what --tracker grants').choices(['admin', 'member']).default('member'))
    .option('--tracker <tracker=role>', 'a role on a tracker (viewer or editor), repeatable', grant)
    .option('--password-stdin', 'read their password from standard input')
    .option('--json', 'print JSON')
    .action(async (email: string, opts: JsonFlag & { name?: string; role: string; tracker?: Record<string, TrackerRole>; passwordStdin?: boolean }) => {
      const password = opts.passwordStdin ? await readPassword() : undefined;
      await withContext(async (ctx) => {
        const added = await accessOf(ctx).addPerson({ email, name: opts.name, role: opts.role, trackers: opts.tracker ?? {}, password }, currentActor()!);
        if (opts.json) return print(json(added));
        print(`Added ${added.person.email} (${added.person.role}).`);
        if (added.invitation) print(renderInvitation(added.person.email, added.invitation));
      });
    });

  users
    .command('set')
    .description("change a person's e-mail, name, role or tracker grants (grants given replace theirs); a narrowing ends their console sessions")
    .argument('<person>', 'e-mail or id')
    .option('--email <email>', 'their new sign-in e-mail (their sessions and tokens stay)')
    .option('--name <name>', 'their name')
    .addOption(new Option('--role <role>', 'admin or member').choices(['admin', 'member']))
    .option('--tracker <tracker=role>', 'a role on a tracker, repeatable; replaces all their grants', grant)
    .option('--no-trackers', 'take every tracker grant away')
    .option('--json', 'print JSON')
    .action(async (who: string, opts: JsonFlag & { email?: string; name?: string; role?: string; tracker?: Record<string, TrackerRole>; trackers?: boolean }) =>
      withContext(async (ctx) => {
        const access = accessOf(ctx);
        const person = await personFor(access, who);
        const trackers = opts.trackers === false ? {} : opts.tracker;
        const updated = await access.updatePerson(person.id, {
          ...(opts.email !== undefined ? { email: opts.email } : {}),
          ...(opts.name !== undefined ? { name: opts.name } : {}),
          ...(opts.role ? { role: opts.role } : {}),
          ...(trackers ? { trackers } : {}),
        });
        print(opts.json ? json(updated) : renderPeople([updated]));
      }),
    );

  users
    .command('remove')
    .description('remove a person: their sessions end and their personal tokens go')
    .argument('<person>', 'e-mail or id')
    .action(async (who: string) =>
      withContext(async (ctx) => {
        const access = accessOf(ctx);
        const removed = await access.removePerson((await personFor(access, who)).id);
        print(`Removed ${removed.email}.`);
      }),
    );

  users
    .command('reset-password')
    .description("clear a person's password (their sessions end) and print a link to set a new one, or set it now with --password-stdin")
    .argument('<person>', 'e-mail or id')
    .option('--password-stdin', 'read the new password from standard input')
    .action(async (who: string, opts: { passwordStdin?: boolean }) => {
      const password = opts.passwordStdin ? await readPassword() : undefined;
      await withContext(async (ctx) => {
        const access = accessOf(ctx);
        const person = await personFor(access, who);
        if (password !== undefined) {
          await access.setPassword(person.id, password);
          return print(`New password set for ${person.email}; their sessions ended.`);
        }
        print(renderInvitation(person.email, await access.resetPassword(person.id)));
      });
    });

  const tokens = program.command('tokens').description('personal and service tokens of the admin API (docs/access.md)');

  tokens
    .command('list')
    .description('every token, by prefix, with its state and last use (never the token)')
    .option('--json', 'print JSON')
    .action(async (opts: JsonFlag) =>
      withContext(async (ctx) => {
        const list = await accessOf(ctx).listTokens();
        print(opts.json ? json({ tokens: list }) : renderTokens(list));
      }),
    );

  tokens
    .command('add-service')
    .description('make a service token (kept when people leave) and print it, once')
    .argument('<name>', 'what it is for, e.g. "ci deploys"')
    .requiredOption('--scope <scope>', `${TOKEN_SCOPES.join(', ')}; repeatable`, collect)
    .option('--tracker <tracker=role>', 'a role on a tracker, repeatable', grant)
    .option('--admin', 'the admin role (every tracker, people, tokens)')
    .option('--expires-days <days>', 'days it lives, 1 to 366 (default: 90)', (v) => Number(v))
    .option('--json', 'print JSON')
    .action(async (name: string, opts: JsonFlag & { scope: string[]; tracker?: Record<string, TrackerRole>; admin?: boolean; expiresDays?: number }) =>
      withContext(async (ctx) => {
        const made = await accessOf(ctx).createServiceToken(
          { name, scopes: opts.scope, ...(opts.admin ? { role: 'admin' } : { grants: opts.tracker ?? {} }), ...(opts.expiresDays !== undefined ? { expiresInDays: opts.expiresDays } : {}) },
          currentActor()!,
        );
        if (opts.json) return print(json(made));
        print(`${made.view.prefix} (${made.view.name}), expires ${made.view.expiresAt}. The token, shown this once:\n  ${made.token}`);
      }),
    );

  tokens
    .command('revoke')
    .description('revoke a token: refused at its next use, by every process')
    .argument('<id>', 'the token id, or its prefix tbp_…/tbs_…')
    .action(async (id: string) =>
      withContext(async (ctx) => {
        const revoked = await accessOf(ctx).revokeToken(id.replace(/^tb[ps]_/, ''));
        print(`Revoked ${revoked.prefix} (${revoked.name}).`);
      }),
    );

  const audit = program
    .command('audit')
    .description('the audit log: every change and every refused attempt, newest first')
    .option('--tracker <id>', 'about this tracker')
    .option('--actor <text>', 'by this person or token id, or a label holding this text (an e-mail)')
    .addOption(new Option('--outcome <outcome>', 'ok, refused or failed').choices(['ok', 'refused', 'failed']))
    .option('--since <time>', 'not older than this ISO 8601 time')
    .option('--limit <n>', 'entries at most (default 50, at most 1000)', (v) => Number(v), 50)
    .option('--json', 'print JSON')
    .action(async (opts: JsonFlag & { tracker?: string; actor?: string; outcome?: 'ok' | 'refused' | 'failed'; since?: string; limit: number }) =>
      withContext(async (ctx) => {
        const entries = await new AuditLog(ctx.redis, ctx.config.redisPrefix, ctx.config.audit).list({ limit: Math.min(Math.max(opts.limit, 1), 1000), tracker: opts.tracker, actor: opts.actor, outcome: opts.outcome, since: opts.since });
        print(opts.json ? json({ entries }) : renderAudit(entries));
      }),
    );

  audit
    .command('export')
    .description('every entry kept, oldest first, as JSON lines on standard output')
    .option('--since <time>', 'not older than this ISO 8601 time')
    .action(async (opts: { since?: string }) =>
      withContext(async (ctx) => {
        for await (const entry of new AuditLog(ctx.redis, ctx.config.redisPrefix, ctx.config.audit).all(opts.since)) process.stdout.write(`${JSON.stringify(entry)}\n`);
      }),
    );

  program
    .command('break-glass')
    .description('switch the admin token (ADMIN_TOKEN or DATA_DIR/admin-token) on or off; off, only people and tokens open the admin API')
    .addArgument(new Argument('<state>', 'on or off').choices(['on', 'off']))
    .action(async (state: 'on' | 'off') =>
      withContext(async (ctx) => {
        await accessOf(ctx).breakGlass.set(state === 'on');
        print(`The admin token is switched ${state}.`);
      }),
    );
}
