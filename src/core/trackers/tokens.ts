import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 random bytes (256 bits), base64url, with a prefix that makes a leaked token easy to grep for. */
export function generateToken(): string {
  return `trk_${randomBytes(32).toString('base64url')}`;
}

/** Tokens are indexed by digest, so neither Redis keys nor logs hold them and lookups are length-independent. */
export function tokenDigest(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Constant-time comparison over digests (equal length whatever the inputs). */
export function tokensEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
