import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import type { RedisClient } from '../core/redis/cluster';
import { ApiTokenStore, MAX_TOKEN_DAYS, view as viewToken, type ApiToken, type ApiTokenView } from '../core/access/api-token-store';
import { noteChange, type Actor } from '../core/access/audit-context';
import { BreakGlass } from '../core/access/break-glass';
import { accessKeys, type AccessKeys } from '../core/access/keys';
import { hashPassword, passwordProblem, type ScryptCost } from '../core/access/passwords';
import { EMAIL, PeopleStore, PersonConflictError, viewPerson, type Person, type PersonView } from '../core/access/people-store';
import { INSTANCE_ROLES, TOKEN_SCOPES, TRACKER_ROLES, type Grants, type TokenScope } from '../core/access/roles';
import { describeIssues } from '../core/trackers/types';
import { tokenDigest } from '../core/trackers/tokens';

export type AccessServiceErrorCode = 'INVALID_INPUT' | 'PERSON_NOT_FOUND' | 'TOKEN_NOT_FOUND' | 'EMAIL_TAKEN' | 'INVITE_INVALID' | 'LAST_ADMIN' | 'BEYOND_OWN_RIGHTS';

export class AccessServiceError extends Error {
  override name = 'AccessServiceError';
  constructor(
    readonly code: AccessServiceErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

const TrackerGrants = z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'a tracker id'), z.enum(TRACKER_ROLES));

export const AddPersonInput = z.strictObject({
  email: EMAIL,
  name: z.string().max(200).default(''),
  role: z.enum(INSTANCE_ROLES).default('member'),
  trackers: TrackerGrants.default({}),
  /** Set now (the CLI's --password-stdin); else the answer holds an invitation to set one. */
  password: z.string().optional(),
});

export const UpdatePersonInput = z.strictObject({
  /** Their sign-in e-mail: sessions and tokens stay (they are the person's, not the address's). */
  email: EMAIL.optional(),
  name: z.string().max(200).optional(),
  role: z.enum(INSTANCE_ROLES).optional(),
  /** Replaces the grants as a whole. */
  trackers: TrackerGrants.optional(),
});

export const CreateTokenInput = z.strictObject({
  name: z.string().trim().min(1).max(100),
  scopes: z.array(z.enum(TOKEN_SCOPES)).min(1),
  trackers: z.array(z.string()).min(1).optional(),
  expiresInDays: z.number().int().min(1).max(MAX_TOKEN_DAYS).default(90),
  /** Service tokens only: what it may do, whoever leaves. */
  role: z.enum(INSTANCE_ROLES).optional(),
  grants: TrackerGrants.optional(),
});

/** How long an invitation (or a password reset) stays usable. */
export const INVITE_HOURS = 72;

function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw new AccessServiceError('INVALID_INPUT', describeIssues(result.error), result.error.issues[0]?.path.map(String).join('.') || undefined);
  return result.data;
}

export interface Invitation {
  /** Give this to the person: `<public url>/admin/#/welcome/<code>`. */
  url: string;
  code: string;
  expiresAt: string;
}

/** People, their tokens and service tokens, and the break-glass switch: what the admin API and the CLI share. */
export class AccessService {
  readonly people: PeopleStore;
  readonly tokens: ApiTokenStore;
  readonly breakGlass: BreakGlass;
  private readonly keys: AccessKeys;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly publicUrl: string,
    /** Tests lower it; the stored hash carries its own cost either way. */
    private readonly passwordCost?: ScryptCost,
  ) {
    this.people = new PeopleStore(redis, prefix);
    this.tokens = new ApiTokenStore(redis, prefix);
    this.breakGlass = new BreakGlass(redis, prefix);
    this.keys = accessKeys(prefix);
  }

  /**
   * Takes a removed tracker out of every person's grants and every token (ApiTokenStore.forgetTracker),
   * so that a tracker made later with the same id is not open to those who had a role on this one.
   * The person's sessions stay (nothing they can reach remains of it).
   */
  async forgetTracker(trackerId: string): Promise<{ people: number; tokens: number }> {
    let people = 0;
    for (const person of await this.people.list()) {
      if (!Object.hasOwn(person.trackers, trackerId)) continue;
      await this.change(person.id, (p) => {
        const trackers = { ...p.trackers };
        delete trackers[trackerId];
        return { next: { ...p, trackers }, endSessions: false };
      });
      people++;
    }
    const tokens = await this.tokens.forgetTracker(trackerId);
    for (const { before, after } of tokens) noteChange(`token ${after.id}`, viewToken(before, null), viewToken(after, null));
    return { people, tokens: tokens.length };
  }

  async listPeople(): Promise<PersonView[]> {
    return (await this.people.list()).map(viewPerson);
  }

  async getPerson(id: string): Promise<Person> {
    const person = await this.people.get(id);
    if (!person) throw new AccessServiceError('PERSON_NOT_FOUND', `No person ${id}.`);
    return person;
  }

  async addPerson(input: unknown, by: Actor): Promise<{ person: PersonView; invitation?: Invitation }> {
    const fields = parse(AddPersonInput, input);
    const passwordHash = fields.password === undefined ? undefined : await this.hashChecked(fields.password, fields.email);
    const person = await this.people.create({ email: fields.email, name: fields.name, role: fields.role, trackers: fields.role === 'admin' ? {} : fields.trackers, ...(passwordHash ? { passwordHash } : {}), createdBy: by.label });
    if (!person) throw new AccessServiceError('EMAIL_TAKEN', `${fields.email} is already someone's e-mail.`, 'email');
    noteChange(`person ${person.id}`, undefined, viewPerson(person));
    return { person: viewPerson(person), ...(passwordHash ? {} : { invitation: await this.invite(person.id) }) };
  }

  async updatePerson(id: string, input: unknown): Promise<PersonView> {
    const change = parse(UpdatePersonInput, input);
    if (change.role === 'member') await this.keepAnAdmin(id);
    const updated = await this.change(id, (p) => {
      const role = change.role ?? p.role;
      const trackers = role === 'admin' ? {} : (change.trackers ?? p.trackers);
      // Any narrowing ends sessions (a demoted person's open console must not keep its rights).
      const narrowed = (p.role === 'admin' && role !== 'admin') || Object.entries(p.trackers).some(([t, r]) => trackers[t] !== r && !(r === 'viewer' && trackers[t] === 'editor'));
      return { next: { ...p, role, trackers, name: change.name ?? p.name, email: change.email ?? p.email }, endSessions: narrowed };
    }, change.email !== undefined ? 'email' : undefined);
    return viewPerson(updated);
  }

  async removePerson(id: string): Promise<PersonView> {
    await this.keepAnAdmin(id);
    const person = await this.people.remove(id);
    if (!person) throw new AccessServiceError('PERSON_NOT_FOUND', `No person ${id}.`);
    await this.tokens.removeOwnedBy(id);
    noteChange(`person ${id}`, viewPerson(person), undefined);
    return viewPerson(person);
  }

  /** A person's own new password (the current one already checked by the caller), or an admin's reset by CLI. */
  async setPassword(id: string, password: string): Promise<void> {
    const person = await this.getPerson(id);
    const passwordHash = await this.hashChecked(password, person.email);
    await this.change(id, (p) => ({ next: { ...p, passwordHash }, endSessions: true }));
  }

  /** An admin's reset: the password is cleared (sessions end) and a new invitation sets one. */
  async resetPassword(id: string): Promise<Invitation> {
    await this.change(id, (p) => {
      const { passwordHash: _old, ...rest } = p;
      return { next: rest as Person, endSessions: true };
    });
    return this.invite(id);
  }

  async invite(personId: string): Promise<Invitation> {
    const code = randomBytes(24).toString('base64url');
    await this.redis.set(this.keys.invite(tokenDigest(code)), personId, 'EX', INVITE_HOURS * 3600);
    return { code, url: `${this.publicUrl.replace(/\/$/, '')}/admin/#/welcome/${code}`, expiresAt: new Date(Date.now() + INVITE_HOURS * 3_600_000).toISOString() };
  }

  /** Who an invitation is for (without using it up). */
  async invitee(code: string): Promise<Person> {
    const id = await this.redis.get(this.keys.invite(tokenDigest(code)));
    const person = id === null ? undefined : await this.people.get(id);
    if (!person) throw new AccessServiceError('INVITE_INVALID', 'This invitation is used, expired or unknown: ask an admin for a new one.');
    return person;
  }

  /** Sets the password an invitation asked for, and uses the invitation up. */
  async acceptInvitation(code: string, password: string): Promise<Person> {
    const person = await this.invitee(code);
    const passwordHash = await this.hashChecked(password, person.email);
    const id = await this.redis.getdel(this.keys.invite(tokenDigest(code)));
    if (id !== person.id) throw new AccessServiceError('INVITE_INVALID', 'This invitation was used meanwhile.');
    return this.change(person.id, (p) => ({ next: { ...p, passwordHash }, endSessions: true }));
  }

  async listTokens(filter: { ownerId?: string } = {}): Promise<ApiTokenView[]> {
    const all = await this.tokens.list();
    return filter.ownerId === undefined ? all : all.filter((t) => t.ownerId === filter.ownerId);
  }

  /** A person's own token: never more than the person's rights, which it narrows (scopes, trackers). */
  async createPersonalToken(owner: Person, input: unknown, by: Actor): Promise<{ token: string; view: ApiTokenView }> {
    const fields = parse(CreateTokenInput, input);
    if (fields.role !== undefined || fields.grants !== undefined) throw new AccessServiceError('INVALID_INPUT', 'A personal token takes its owner rights; role and grants are for service tokens.', fields.role ? 'role' : 'grants');
    if (fields.scopes.includes('admin') && owner.role !== 'admin') throw new AccessServiceError('BEYOND_OWN_RIGHTS', 'Only an admin can give a token the admin scope.', 'scopes');
    return this.makeToken({ kind: 'personal', ownerId: owner.id }, fields, by);
  }

  /** A service token, made by an admin: its own grants, kept when people leave. */
  async createServiceToken(input: unknown, by: Actor): Promise<{ token: string; view: ApiTokenView }> {
    const fields = parse(CreateTokenInput, input);
    const grants: Grants = { role: fields.role ?? 'member', trackers: fields.role === 'admin' ? {} : (fields.grants ?? {}) };
    if (grants.role !== 'admin' && Object.keys(grants.trackers).length === 0) throw new AccessServiceError('INVALID_INPUT', 'A service token needs role admin, or grants on at least one tracker ({"shop": "editor"}).', 'grants');
    if (fields.scopes.includes('admin') && grants.role !== 'admin') throw new AccessServiceError('INVALID_INPUT', 'The admin scope needs role admin.', 'scopes');
    return this.makeToken({ kind: 'service', grants }, fields, by);
  }

  async revokeToken(id: string): Promise<ApiTokenView> {
    const before = await this.tokens.revoke(id);
    if (!before) throw new AccessServiceError('TOKEN_NOT_FOUND', `No token ${id}.`);
    const after = (await this.tokens.get(id))!;
    noteChange(`token ${id}`, viewToken(before, null), viewToken(after, null));
    return viewToken(after, null);
  }

  async getToken(id: string): Promise<ApiToken> {
    const token = await this.tokens.get(id);
    if (!token) throw new AccessServiceError('TOKEN_NOT_FOUND', `No token ${id}.`);
    return token;
  }

  private async makeToken(kind: Pick<ApiToken, 'kind' | 'ownerId' | 'grants'>, fields: z.infer<typeof CreateTokenInput>, by: Actor): Promise<{ token: string; view: ApiTokenView }> {
    const expiresAt = new Date(Date.now() + fields.expiresInDays * 86_400_000).toISOString();
    const { token, record } = await this.tokens.create({ ...kind, name: fields.name, scopes: [...new Set(fields.scopes)] as TokenScope[], ...(fields.trackers ? { trackers: fields.trackers } : {}), createdBy: by.label, expiresAt });
    const shown = viewToken(record, null);
    noteChange(`token ${record.id}`, undefined, shown);
    return { token, view: shown };
  }

  /** `field`: the input a conflict over an e-mail is about, when the change sets one. */
  private async change(id: string, fn: (p: Person) => { next: Person; endSessions: boolean }, field?: string): Promise<Person> {
    try {
      const changed = await this.people.update(id, fn);
      if (!changed) throw new AccessServiceError('PERSON_NOT_FOUND', `No person ${id}.`);
      noteChange(`person ${id}`, viewPerson(changed.before), viewPerson(changed.after));
      return changed.after;
    } catch (err) {
      if (err instanceof PersonConflictError) throw new AccessServiceError('EMAIL_TAKEN', err.message, field);
      throw err;
    }
  }

  /** A relay with people keeps at least one admin who can sign in. */
  private async keepAnAdmin(leaving: string): Promise<void> {
    const admins = (await this.people.list()).filter((p) => p.role === 'admin');
    if (admins.length === 1 && admins[0]!.id === leaving) throw new AccessServiceError('LAST_ADMIN', 'This is the last admin: make someone else admin first.');
  }

  private async hashChecked(password: string, email: string): Promise<string> {
    const problem = passwordProblem(password, email);
    if (problem) throw new AccessServiceError('INVALID_INPUT', problem, 'password');
    return hashPassword(password, this.passwordCost);
  }
}
