import { randomBytes } from 'node:crypto';
import { link, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readTextIfExists } from '../core/files';

/** Name of the file under `DATA_DIR` that keeps a generated admin token. */
export const ADMIN_TOKEN_FILE = 'admin-token';

/** Shortest admin token accepted, from the environment or the file: 128 bits of base64. */
export const MIN_ADMIN_TOKEN_LENGTH = 22;

export interface AdminTokenResult {
  token: string;
  /** `config`: ADMIN_TOKEN; `file`: read back from DATA_DIR; `generated`: created by this call (print it once). */
  source: 'config' | 'file' | 'generated';
  /** The token file, when the token lives in one. */
  file?: string;
}

/** 32 random bytes (256 bits), base64url, prefixed so that a leaked admin token is easy to grep for. */
export function generateAdminToken(): string {
  return `adm_${randomBytes(32).toString('base64url')}`;
}

async function readToken(file: string): Promise<string | undefined> {
  const text = await readTextIfExists(file);
  if (text === undefined) return undefined;
  const token = text.trim();
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new Error(`${file} holds no usable admin token (at least ${MIN_ADMIN_TOKEN_LENGTH} characters); delete it to have a new one generated, or set ADMIN_TOKEN.`);
  }
  return token;
}

/**
 * The admin token: ADMIN_TOKEN when set, else the one kept in `DATA_DIR/admin-token`, else a new
 * one written there with mode 0600. The token is written to a private temporary file first and
 * then hard-linked into place, so the token file never exists half-written, and of two processes
 * starting on the same DATA_DIR, one creates it and the other reads its token back.
 */
export async function ensureAdminToken(dataDir: string, configured: string | undefined): Promise<AdminTokenResult> {
  if (configured !== undefined) return { token: configured, source: 'config' };
  const file = path.join(dataDir, ADMIN_TOKEN_FILE);
  const existing = await readToken(file);
  if (existing !== undefined) return { token: existing, source: 'file', file };
  await mkdir(dataDir, { recursive: true });
  const token = generateAdminToken();
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  await writeFile(temporary, `${token}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(temporary, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const winner = await readToken(file);
    if (winner !== undefined) return { token: winner, source: 'file', file };
    throw err;
  } finally {
    await rm(temporary, { force: true });
  }
  return { token, source: 'generated', file };
}
