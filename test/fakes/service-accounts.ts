import { generateKeyPairSync, verify, type KeyObject } from 'node:crypto';

/** A service-account key as Google Cloud downloads it (IAM → Service accounts → Keys → Add key → JSON). */
export interface ServiceAccountKeyFile {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  auth_uri: string;
  token_uri: string;
  auth_provider_x509_cert_url: string;
  client_x509_cert_url: string;
  universe_domain: string;
}

/** Why a bearer token was refused; Google answers each with 401 UNAUTHENTICATED. */
export type JwtRefusal = 'malformed' | 'unknown-key' | 'bad-signature' | 'expired' | 'no-scope';

/**
 * The service accounts a fake Google API knows, by their keys' public halves, and the check of the
 * self-signed JWTs their clients send as bearer tokens (google-auth-library with
 * `useJWTAccessWithScope`): RS256 over `header.payload`, signed by a key Google knows for `iss`,
 * not expired, and carrying a scope of the API. A key not added here is one that was deleted or
 * never existed.
 */
export class ServiceAccounts {
  private readonly keys = new Map<string, KeyObject>();

  /** A new service account of `project` with one key, as the JSON file Google gives for it. */
  create(name: string, project = 'tributary-test'): ServiceAccountKeyFile {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const email = `${name}@${project}.iam.gserviceaccount.com`;
    const keyId = `${name}-key-1`;
    this.keys.set(keyId, publicKey);
    return {
      type: 'service_account',
      project_id: project,
      private_key_id: keyId,
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: email,
      client_id: '1'.repeat(21),
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: 'https://oauth2.googleapis.com/token',
      auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
      client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(email)}`,
      universe_domain: 'googleapis.com',
    };
  }

  /** Deletes a key, as IAM → Keys → Delete does: tokens it signs are refused from now on. */
  deleteKey(keyId: string): void {
    this.keys.delete(keyId);
  }

  /** The signer of a self-signed JWT, or why it is refused. `scope` is a scope the API accepts. */
  verify(token: string, scope: string, nowMs: number): { email: string } | { refused: JwtRefusal } {
    const parts = token.split('.');
    if (parts.length !== 3) return { refused: 'malformed' };
    let header: { alg?: string; kid?: string };
    let claims: { iss?: string; sub?: string; exp?: number; scope?: string; aud?: string };
    try {
      header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as typeof header;
      claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as typeof claims;
    } catch {
      return { refused: 'malformed' };
    }
    if (header.alg !== 'RS256' || typeof claims.iss !== 'string') return { refused: 'malformed' };
    const key = header.kid === undefined ? undefined : this.keys.get(header.kid);
    if (!key) return { refused: 'unknown-key' };
    if (!verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), key, Buffer.from(parts[2]!, 'base64url'))) return { refused: 'bad-signature' };
    if (typeof claims.exp !== 'number' || claims.exp * 1000 < nowMs) return { refused: 'expired' };
    if (!(claims.scope ?? '').split(' ').includes(scope)) return { refused: 'no-scope' };
    return { email: claims.iss };
  }

  /** Whether `token` looks like a JWT at all (three base64url parts), rather than a test's plain credential name. */
  static isJwt(token: string): boolean {
    return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);
  }
}
