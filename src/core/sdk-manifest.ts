import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from './files';

/** What `npm run build:sdk` writes beside the browser SDK (scripts/build-sdk.js): dist/sdk/sdk.json. */
export interface SdkManifest {
  version: string;
  /** The first 16 hex digits of the script's SHA-256: its immutable path is `/sdk.<hash>.js`. */
  hash: string;
  /** Subresource Integrity of the script (`sha384-…`), for a pinned tag. */
  integrity: string;
  bytes: number;
  gzipBytes: number;
}

export function sdkDir(root = packageRoot()): string {
  return path.join(root, 'dist', 'sdk');
}

let cached: SdkManifest | undefined;

/** The built SDK's manifest, or undefined when it was not built; read once per process once found. */
export function builtSdkManifest(): SdkManifest | undefined {
  if (cached) return cached;
  try {
    cached = JSON.parse(readFileSync(path.join(sdkDir(), 'sdk.json'), 'utf8')) as SdkManifest;
  } catch {
    return undefined;
  }
  return cached;
}
