import { readFile } from 'node:fs/promises';

/** A file's text, or undefined when there is no such file (any other failure is thrown). */
export async function readTextIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
