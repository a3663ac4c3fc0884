import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { describeIssues, TrackerSchema, type Tracker } from './types';

const ConfigFileSchema = z.object({ trackers: z.array(TrackerSchema).default([]) }).strict();

export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}

/**
 * Reads `TRIBUTARY_CONFIG` (JSON, or YAML for .yaml/.yml). Every problem names its field,
 * e.g. `trackers.0.timeZone: not an IANA time zone`.
 */
export async function loadConfigFile(file: string): Promise<Tracker[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigFileError(`Cannot read TRIBUTARY_CONFIG ${file}: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = /\.ya?ml$/i.test(file) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new ConfigFileError(`${file} is not valid ${/\.ya?ml$/i.test(file) ? 'YAML' : 'JSON'}: ${(err as Error).message}`);
  }
  const parsed = ConfigFileSchema.safeParse(data ?? {});
  if (!parsed.success) throw new ConfigFileError(`${file}: ${describeIssues(parsed.error)}`);
  const ids = new Set<string>();
  const tokens = new Set<string>();
  parsed.data.trackers.forEach((t, i) => {
    if (ids.has(t.id)) throw new ConfigFileError(`${file}: trackers.${i}.id: duplicate tracker id ${t.id}`);
    ids.add(t.id);
    t.tokens.forEach((tok, j) => {
      if (tokens.has(tok.token)) throw new ConfigFileError(`${file}: trackers.${i}.tokens.${j}.token: the same token is declared twice`);
      tokens.add(tok.token);
    });
  });
  return parsed.data.trackers;
}
