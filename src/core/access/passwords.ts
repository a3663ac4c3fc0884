import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * scrypt at OWASP's current minimum for password storage (N=2^17, r=8, p=1: 128 MiB and a few
 * hundred milliseconds a hash), run on libuv's thread pool so that a sign-in never blocks the event
 * loop. Node 20 has no argon2id of its own, and scrypt needs no native package.
 * https://cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html#scrypt
 */
export interface ScryptCost {
  logN: number;
  r: number;
  p: number;
}

export const OWASP_SCRYPT: ScryptCost = { logN: 17, r: 8, p: 1 };

/** Shortest password accepted: NIST SP 800-63B's minimum for a password chosen by its user. */
export const MIN_PASSWORD_LENGTH = 12;
/** Longest: bounds the work an attacker can ask of a sign-in. */
export const MAX_PASSWORD_LENGTH = 256;

const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const N = 2 ** cost.logN;
  const options: ScryptOptions = { N, r: cost.r, p: cost.p, maxmem: 256 * N * cost.r + 1024 * 1024 };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** `scrypt$<logN>$<r>$<p>$<salt>$<hash>` (base64url): the cost travels with the hash, so it can be raised later. */
export async function hashPassword(password: string, cost: ScryptCost = OWASP_SCRYPT): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.logN, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

const STORED = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = STORED.exec(stored);
  if (!m) return false;
  const key = await derive(password, Buffer.from(m[4]!, 'base64url'), { logN: Number(m[1]), r: Number(m[2]), p: Number(m[3]) });
  const expected = Buffer.from(m[5]!, 'base64url');
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** Whether a stored hash is below the given cost (it is then hashed again at the next sign-in). */
export function needsRehash(stored: string, cost: ScryptCost = OWASP_SCRYPT): boolean {
  const m = STORED.exec(stored);
  return !m || Number(m[1]) < cost.logN || Number(m[2]) < cost.r || Number(m[3]) < cost.p;
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string, email?: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `a password has at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `a password has at most ${MAX_PASSWORD_LENGTH} characters`;
  if (email && password.toLowerCase().includes(email.toLowerCase().split('@')[0]!) && email.split('@')[0]!.length >= 4) return 'a password may not contain its e-mail name';
  return undefined;
}
