import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { packageRoot } from './files';

/** What `npm run build:sdk` writes beside the browser SDK (scripts/build-sdk.js): dist/sdk/sdk.json. */
const SdkManifestSchema = z.object({
  version: z.string(),
  /** The first 16 hex digits of the script's SHA-256: its immutable path is `/sdk.<hash>.js`. */
  hash: z.string().regex(/^[0-9a-f]{16}$/),
  /** Subresource Integrity of the script (`sha384-…`), for a pinned tag. */
  integrity: z.string().startsWith('sha384-'),
  bytes: z.number().int(),
  gzipBytes: z.number().int(),
});
export type SdkManifest = z.infer<typeof SdkManifestSchema>;

/** sdk.json's text as a manifest; throws on anything the build does not write. */
export function parseSdkManifest(text: string): SdkManifest {
  return SdkManifestSchema.parse(JSON.parse(text));
}

export function sdkDir(root = packageRoot()): string {
  return path.join(root, 'dist', 'sdk');
}

let cached: SdkManifest | undefined;

/** The built SDK's manifest, or undefined when it was not built; read once per process once found. */
export function builtSdkManifest(): SdkManifest | undefined {
  if (cached) return cached;
  try {
    cached = parseSdkManifest(readFileSync(path.join(sdkDir(), 'sdk.json'), 'utf8'));
  } catch {
    return undefined;
  }
  return cached;
}
