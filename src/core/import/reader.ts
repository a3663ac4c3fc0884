import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { CsvError } from 'csv-parse';
import { parseExactJson, stringifyExactJson } from '../records/exact-json';

/**
 * Reads an import's records one at a time, from a file or a request body: NDJSON (one JSON object
 * a line) and CSV (a header row, then one record a row) stream at any size; a JSON array is read
 * whole (JSON_ARRAY_MAX_BYTES), because its integers must keep their digits (src/core/records/exact-json.ts)
 * and no streaming JSON parser hands over a number's text. gzip is undone on the way.
 */

export const IMPORT_FORMATS = ['ndjson', 'json', 'csv'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** The biggest JSON array read (decoded): past it, NDJSON is the way (`jq -c '.[]' file.json > file.ndjson`). */
export const JSON_ARRAY_MAX_BYTES = 256 * 1024 * 1024;

/** One record of the input, or why its line is not one. */
export interface ImportItem {
  /** Its line (NDJSON; CSV: the line its row ends on) or its place in the array (JSON), from 1. */
  line: number;
  /** The record's text as the input holds it: what its deterministic `_id` is made from. */
  text: string;
  value?: Record<string, unknown>;
  /** Why the line is not a record. */
  error?: { code: 'ERR_MALFORMED_JSON' | 'ERR_INVALID_PAYLOAD' | 'ERR_MALFORMED_BODY'; message: string };
}

export class ImportInputError extends Error {
  override name = 'ImportInputError';
}

/** The format a file name says (`.ndjson`, `.jsonl`, `.json`, `.csv`, each maybe `.gz`), or undefined. */
export function formatOfName(name: string): { format: ImportFormat | undefined; gzip: boolean } {
  const lower = name.toLowerCase();
  const gzip = lower.endsWith('.gz');
  const base = gzip ? lower.slice(0, -3) : lower;
  const format = base.endsWith('.ndjson') || base.endsWith('.jsonl') ? 'ndjson' : base.endsWith('.json') ? 'json' : base.endsWith('.csv') ? 'csv' : undefined;
  return { format, gzip };
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

const notAnObject = (value: unknown): NonNullable<ImportItem['error']> => ({
  code: 'ERR_INVALID_PAYLOAD',
  message: `A record must be a JSON object; this is ${Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`}.`,
});

/** The records of `input` (bytes as they are stored: gzip when `gzip`). */
export function readImport(input: Readable, format: ImportFormat, gzip: boolean): AsyncGenerator<ImportItem> {
  const decoded = gzip ? input.pipe(createGunzip()) : input;
  // A broken gzip stream fails the decoded stream; the source's own errors are the caller's to see there too.
  if (gzip) input.once('error', (err) => decoded.destroy(err));
  if (format === 'ndjson') return readNdjson(decoded);
  if (format === 'csv') return readCsv(decoded);
  return readJsonArray(decoded);
}

async function* readNdjson(input: Readable): AsyncGenerator<ImportItem> {
  let line = 0;
  for await (const raw of createInterface({ input, crlfDelay: Infinity })) {
    line++;
    const text = raw.trim();
    if (text === '') continue;
    yield parseObject(text, line);
  }
}

function parseObject(text: string, line: number): ImportItem {
  let value: unknown;
  try {
    value = parseExactJson(text);
  } catch (err) {
    return { line, text, error: { code: 'ERR_MALFORMED_JSON', message: `The line is not JSON: ${(err as Error).message}` } };
  }
  return isRecord(value) ? { line, text, value } : { line, text, error: notAnObject(value) };
}

async function* readJsonArray(input: Readable): AsyncGenerator<ImportItem> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    size += (chunk as Buffer).length;
    if (size > JSON_ARRAY_MAX_BYTES) throw new ImportInputError(`a JSON array file is read whole, up to ${JSON_ARRAY_MAX_BYTES / 1024 / 1024} MiB; this one is bigger: write it as NDJSON (jq -c '.[]' file.json > file.ndjson), which streams at any size`);
    chunks.push(chunk as Buffer);
  }
  let value: unknown;
  try {
    value = parseExactJson(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw new ImportInputError(`not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(value)) throw new ImportInputError('a .json import holds one JSON array of records (for one object a line, use .ndjson)');
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    const text = stringifyExactJson(item);
    yield isRecord(item) ? { line: i + 1, text, value: item } : { line: i + 1, text, error: notAnObject(item) };
  }
}

/**
 * CSV cells are text; a record's values are typed the way a person reading the sheet would: a
 * plain decimal number is a number (but not one with a leading zero, a postcode or a phone
 * number, nor an integer beyond 2^53, an id), `true`/`false` are booleans, an empty cell is no
 * property at all; everything else stays text.
 */
export function csvValue(cell: string): string | number | boolean | undefined {
  if (cell === '') return undefined;
  if (cell === 'true') return true;
  if (cell === 'false') return false;
  if (/^-?(0|[1-9]\d*)(\.\d+)?$/.test(cell)) {
    const n = Number(cell);
    if (Number.isFinite(n) && (!Number.isInteger(n) || Number.isSafeInteger(n)) && (cell.includes('.') || String(n) === cell)) return n;
  }
  return cell;
}

async function* readCsv(input: Readable): AsyncGenerator<ImportItem> {
  const skipped: ImportItem[] = [];
  // Loaded when a CSV is read: every other command of the CLI starts without it.
  const { parse: parseCsv } = require('csv-parse') as typeof import('csv-parse');
  const parser = input.pipe(
    parseCsv({
      bom: true,
      columns: (header: string[]) => header.map((name) => name.trim()),
      skip_empty_lines: true,
      info: true,
      raw: true,
      skip_records_with_error: true,
      on_skip: (err: CsvError | undefined, raw: string | undefined) => {
        skipped.push({ line: Number((err as { lines?: number } | undefined)?.lines ?? 0), text: raw ?? '', error: { code: 'ERR_MALFORMED_BODY', message: `The row is not valid CSV: ${err?.message ?? 'unreadable'}` } });
        return undefined;
      },
    }),
  );
  for await (const row of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number }; raw: string }>) {
    // The parser reports a bad row as soon as it meets it, possibly before the rows read just before it are handed over.
    while (skipped.length > 0 && skipped[0]!.line < row.info.lines) yield skipped.shift()!;
    const value: Record<string, unknown> = {};
    for (const [name, cell] of Object.entries(row.record)) {
      const typed = csvValue(cell);
      if (typed !== undefined) value[name] = typed;
    }
    yield { line: row.info.lines, text: row.raw.replace(/\r?\n$/, ''), value };
  }
  while (skipped.length > 0) yield skipped.shift()!;
}

/** For tests and the HTTP form: a body already in memory as an input. */
export function importInputOf(bytes: Buffer | string): Readable {
  return Readable.from([typeof bytes === 'string' ? Buffer.from(bytes) : bytes]);
}
