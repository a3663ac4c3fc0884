import { readFile } from 'node:fs/promises';

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
