import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import type { RedisClient } from '../redis/cluster';
import { accessKeys, type AccessKeys } from './keys';
import { INSTANCE_ROLES, TRACKER_ROLES, type Grants } from './roles';
import { LuaScript } from '../redis/lua-script';

export const EMAIL = z.email().max(254).transform((e) => e.trim());

export const PersonSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string().max(200).default(''),
  role: z.enum(INSTANCE_ROLES),
  trackers: z.record(z.string(), z.enum(TRACKER_ROLES)).default({}),
  /** Absent until the person sets one from an invitation. */
  passwordHash: z.string().optional(),
  /**
   * Bumped by every change that must end the person's sessions (a new password, another role,
   * tracker grants taken away): a session remembers the number it was opened under.
   */
  epoch: z.number().int().default(0),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Who created the person (an actor label, see audit-log.ts). */
  createdBy: z.string().optional(),
});
export type Person = z.infer<typeof PersonSchema>;

/** A person as answers show it: never the password hash. */
export type PersonView = Omit<Person, 'passwordHash'> & { hasPassword: boolean };

export function viewPerson(p: Person): PersonView {
  const { passwordHash, ...rest } = p;
  return { ...rest, hasPassword: passwordHash !== undefined };
}

export function grantsOf(p: Person): Grants {
  return { role: p.role, trackers: p.trackers };
}

export class PersonConflictError extends Error {
  override name = 'PersonConflictError';
}

// Writes a person if its JSON is still what the caller read ('' for a new one), and keeps the
// e-mail index with it: ARGV[3] is the e-mail to claim, ARGV[4] the one to release.
const SAVE_PERSON = new LuaScript(`
local current = redis.call('HGET', KEYS[1], ARGV[1])
if (ARGV[5] == '' and current) or (ARGV[5] ~= '' and current ~= ARGV[5]) then return 0 end
local owner = redis.call('HGET', KEYS[2], ARGV[3])
if owner and owner ~= ARGV[1] then return -1 end
if ARGV[4] ~= '' and ARGV[4] ~= ARGV[3] then redis.call('HDEL', KEYS[2], ARGV[4]) end
redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1`);

function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

/** People in one Redis hash, with an index by e-mail; every write is a compare-and-set. */
export class PeopleStore {
  private readonly keys: AccessKeys;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = accessKeys(prefix);
  }

  async get(id: string): Promise<Person | undefined> {
    const json = await this.redis.hget(this.keys.people, id);
    return json === null ? undefined : PersonSchema.parse(JSON.parse(json));
  }

  async byEmail(email: string): Promise<Person | undefined> {
    const id = await this.redis.hget(this.keys.emails, emailKey(email));
    return id === null ? undefined : this.get(id);
  }

  async list(): Promise<Person[]> {
    const all = await this.redis.hvals(this.keys.people);
    return all.map((json) => PersonSchema.parse(JSON.parse(json))).sort((a, b) => a.email.localeCompare(b.email));
  }

  async count(): Promise<number> {
    return this.redis.hlen(this.keys.people);
  }

  /** Creates a person; false when the e-mail is taken. */
  async create(fields: Pick<Person, 'email' | 'name' | 'role' | 'trackers'> & { passwordHash?: string; createdBy?: string }): Promise<Person | undefined> {
    const now = new Date().toISOString();
    const person = PersonSchema.parse({ ...fields, id: `p_${randomBytes(9).toString('base64url')}`, epoch: 0, createdAt: now, updatedAt: now });
    const result = await this.write('', person, '');
    return result === 1 ? person : undefined;
  }

  /**
   * Changes one person atomically (retried when another writer came first); undefined when there is
   * no such person. The change says whether the person's sessions end (`endSessions`).
   */
  async update(id: string, change: (current: Person) => { next: Person; endSessions: boolean }): Promise<{ before: Person; after: Person } | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const json = await this.redis.hget(this.keys.people, id);
      if (json === null) return undefined;
      const before = PersonSchema.parse(JSON.parse(json));
      const { next, endSessions } = change(structuredClone(before));
      const after = PersonSchema.parse({ ...next, id, epoch: before.epoch + (endSessions ? 1 : 0), updatedAt: new Date().toISOString() });
      const result = await this.write(json, after, before.email);
      if (result === 1) return { before, after };
      if (result === -1) throw new PersonConflictError(`${after.email} is already someone's e-mail.`);
    }
    throw new PersonConflictError(`Person ${id} is being changed by someone else; try again.`);
  }

  async remove(id: string): Promise<Person | undefined> {
    const person = await this.get(id);
    if (!person) return undefined;
    await this.redis.multi().hdel(this.keys.people, id).hdel(this.keys.emails, emailKey(person.email)).exec();
    return person;
  }

  private async write(expected: string, person: Person, previousEmail: string): Promise<number> {
    const { people, emails } = this.keys;
    return (await SAVE_PERSON.run(this.redis, 2, people, emails, person.id, JSON.stringify(person), emailKey(person.email), previousEmail === '' ? '' : emailKey(previousEmail), expected)) as number;
  }
}
