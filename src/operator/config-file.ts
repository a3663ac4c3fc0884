import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import * as z from 'zod';
import { describeIssues, TrackerSchema, type Tracker } from '../core/trackers/types';

const ConfigFileSchema = z.object({ trackers: z.array(TrackerSchema).default([]) }).strict();

export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}

/** A tracker of the file, and which of its settings the file states (the others keep what is stored). */
export interface DeclaredTracker {
  tracker: Tracker;
  fields: ReadonlySet<string>;
}

/** Settings the file decides when it states them; `id`, `tokens` and `createdAt` follow their own rules. */
const FILE_SETTINGS = ['name', 'timeZone', 'corsOrigins', 'rateLimit', 'captureContext', 'dedupWindowHours', 'partitions', 'archiveDays', 'invalidUnicode', 'destinations', 'sources', 'privacyRules', 'privacySecret'] as const satisfies ReadonlyArray<keyof Tracker>;

/**
 * The tracker to store at start, from the file's declaration and what Redis holds. The file wins
 * for the settings it states; a setting it leaves out keeps its stored value. Tokens are merged:
 * a token added with the CLI or the console stays, and a token revoked there stays revoked even if
 * the file still lists it (a restart must never bring a leaked token back); the warnings say so.
 */
export function mergeDeclaredTracker(stored: Tracker | undefined, declared: DeclaredTracker): { tracker: Tracker; warnings: string[] } {
  if (!stored) return { tracker: declared.tracker, warnings: [] };
  const merged: Tracker = { ...stored };
  for (const field of FILE_SETTINGS) if (declared.fields.has(field)) (merged as Record<string, unknown>)[field] = declared.tracker[field];
  const warnings: string[] = [];
  if (merged.partitions < stored.partitions) {
    // Records queued in the partitions past the new count would never be delivered.
    warnings.push(`tracker ${stored.id} has ${stored.partitions} partitions and the config file asks for ${merged.partitions}; partitions can grow but not shrink, so it keeps ${stored.partitions}: change the file`);
    merged.partitions = stored.partitions;
  }
  const tokens = new Map(stored.tokens.map((t) => [t.token, t]));
  for (const token of declared.tracker.tokens) {
    const current = tokens.get(token.token);
    if (!current) tokens.set(token.token, token);
    else if (current.revokedAt && !token.revokedAt) warnings.push(`a token of tracker ${stored.id} listed in the config file was revoked on ${current.revokedAt}; it stays revoked: remove it from the file`);
    else if (token.revokedAt && !current.revokedAt) tokens.set(token.token, { ...current, revokedAt: token.revokedAt });
  }
  merged.tokens = [...tokens.values()];
  return { tracker: merged, warnings };
}

/**
 * Reads `TRIBUTARY_CONFIG` (JSON, or YAML for .yaml/.yml). Every problem names its field,
 * e.g. `trackers.0.timeZone: not an IANA time zone`.
 */
export async function loadConfigFile(file: string): Promise<Tracker[]> {
  return (await loadDeclaredTrackers(file)).map((d) => d.tracker);
}

/** loadConfigFile, with the settings each tracker states. */
export async function loadDeclaredTrackers(file: string): Promise<DeclaredTracker[]> {
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
  const raw = (data as { trackers?: unknown[] } | null)?.trackers ?? [];
  return parsed.data.trackers.map((tracker, i) => ({ tracker, fields: new Set(Object.keys(raw[i] as object)) }));
}
