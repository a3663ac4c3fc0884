import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** The package root: the first folder above this module with a package.json (src/core under tsx, dist/src/core built). */
export function packageRoot(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${__dirname}`);
    dir = parent;
  }
  return dir;
}

/** A file's bytes, or undefined when there is no such file (any other failure is thrown). */
export async function readIfExists(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** A file's text, or undefined when there is no such file (any other failure is thrown). */
export async function readTextIfExists(file: string): Promise<string | undefined> {
  return (await readIfExists(file))?.toString('utf8');
}
