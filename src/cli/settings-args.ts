import { InvalidArgumentError } from 'commander';

export type SettingPair = readonly [key: string, value: unknown];

/**
 * `key=value` → [key, value]. The value is read as JSON when it parses (`true`, `false`, numbers,
 * objects, arrays, `"quoted text"`), so `maxColumns=50` reaches the schema as a number; anything
 * else is a string. Integers beyond 2^53 stay strings: JSON would round them, and such values are
 * ids far more often than quantities.
 */
export function parseSetting(arg: string): SettingPair {
  const eq = arg.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError(`expected key=value, got "${arg}".`);
  const key = arg.slice(0, eq).trim();
  const raw = arg.slice(eq + 1);
  if (key === '') throw new InvalidArgumentError(`expected key=value, got "${arg}".`);
  return [key, readValue(raw)];
}

function readValue(raw: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return raw;
  }
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) return raw;
  return value;
}

/** Commander's parser for a variadic, repeatable `--setting`: it collects the pairs itself. */
export function collectSetting(arg: string, previous: SettingPair[] | undefined): SettingPair[] {
  return [...(previous ?? []), parseSetting(arg)];
}

export function parseSettingsJson(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new InvalidArgumentError(`not JSON (${(err as Error).message}).`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidArgumentError('expected a JSON object, e.g. \'{"path":"warehouse/shop.duckdb"}\'.');
  return value as Record<string, unknown>;
}

/** `--settings-json` first, then each `--setting` over it; a key given twice by `--setting` is a mistake. */
export function mergeSettings(json: Record<string, unknown> | undefined, pairs: readonly SettingPair[] = []): Record<string, unknown> {
  // A null-prototype object, so that a `__proto__` key is a plain key for the schema to refuse.
  const settings: Record<string, unknown> = Object.assign(Object.create(null) as Record<string, unknown>, json);
  const seen = new Set<string>();
  for (const [key, value] of pairs) {
    if (seen.has(key)) throw new InvalidArgumentError(`--setting ${key} is given twice.`);
    seen.add(key);
    settings[key] = value;
  }
  return { ...settings };
}
