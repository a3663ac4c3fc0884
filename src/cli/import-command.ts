import { createReadStream, statSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { InvalidArgumentError, type Command } from 'commander';
import { ImportLane } from '../../jobs/history/import-lane';
import { importRecords, importRefusal, type ImportLineError, type ImportSummary } from '../core/import/importer';
import { formatOfName, IMPORT_FORMATS, ImportInputError, readImport, type ImportFormat } from '../core/import/reader';
import type { RecordKind } from '../core/records/types';
import { MemoryBudget } from '../core/redis/memory-budget';
import { CliError, connectorLogger, withContext } from './context';
import { createProgress } from './progress';
import { json } from './render';

const RESOURCES: readonly RecordKind[] = ['event', 'user', 'session'];

interface ImportFlags {
  resource: RecordKind;
  format?: ImportFormat;
  json?: boolean;
  nice: number;
}

/** The default niceness of an import: the lowest CPU priority, so that on a shared host live traffic goes first. */
const IMPORT_NICENESS = 19;

function niceness(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 19) throw new InvalidArgumentError('a whole number from 0 (as other processes) to 19 (the lowest priority)');
  return n;
}

/**
 * Lowers this process's CPU priority (never raises it: that needs privileges). Parsing and checking
 * a few thousand lines a second takes a core's share that the API and the delivery of live records
 * would otherwise have on the same host (`npm run bench`, bench/RESULTS.md).
 */
function lowerPriority(nice: number): void {
  try {
    if (getPriority() < nice) setPriority(nice);
  } catch {
    // Not permitted here (some containers): the import runs at the priority it was given.
  }
}

function resource(value: string): RecordKind {
  const kind = value.replace(/s$/, '') as RecordKind;
  if (!RESOURCES.includes(kind)) throw new InvalidArgumentError(`one of ${RESOURCES.join(', ')}`);
  return kind;
}

function format(value: string): ImportFormat {
  if (!(IMPORT_FORMATS as readonly string[]).includes(value)) throw new InvalidArgumentError(`one of ${IMPORT_FORMATS.join(', ')}`);
  return value as ImportFormat;
}

/** One file's outcome, as `--json` prints it. */
interface FileSummary extends ImportSummary {
  file: string;
  format: ImportFormat;
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

function renderLineError(error: ImportLineError, format: ImportFormat): string {
  return `  ${format === 'json' ? 'record' : 'line'} ${error.line}: ${error.code}${error.field ? ` (${error.field})` : ''}: ${error.message}`;
}

function renderSummary(s: FileSummary): string {
  const lines = [`${s.file}: ${s.imported} imported, ${s.failed} refused${s.duplicates ? `, ${s.duplicates} repeated _id kept once` : ''} (${s.read} read).`];
  for (const error of s.errors) lines.push(renderLineError(error, s.format));
  if (s.failed > s.errors.length) lines.push(`  … and ${s.failed - s.errors.length} more refused lines.`);
  return lines.join('\n');
}

export function registerImportCommand(program: Command): void {
  program
    .command('import')
    .description("import past records from files into a tracker: checked as the v3 edge checks them, archived, and sent to every destination (through its rules) in the history lane, which yields to live records")
    .argument('<tracker>', 'tracker id')
    .argument('<file...>', 'NDJSON (.ndjson, .jsonl), JSON arrays (.json) or CSV with a header row (.csv); .gz too')
    .option('--resource <kind>', 'what the records are: event, user or session', resource, 'event' as RecordKind)
    .option('--format <format>', `the files' format when their names do not say it: ${IMPORT_FORMATS.join(', ')}`, format)
    .option('--json', 'print JSON: each file with its counts and its first refused lines')
    .option('--nice <n>', 'CPU priority of the import, as nice(1): 19 yields the CPU to every other process of the host, 0 competes with them', niceness, IMPORT_NICENESS)
    .addHelpText(
      'after',
      '\nA record without _id gets one made from the tracker, the resource, its line number and its text: importing the same file again\n(or again after a crash) stores nothing twice. _event_at is kept as given; _received_at is the time of the import.\nA refused line is reported with its number; the import goes on.',
    )
    .action((trackerId: string, files: string[], flags: ImportFlags) =>
      withContext(async ({ service, config, redis }) => {
        lowerPriority(flags.nice);
        const tracker = await service.getTracker(trackerId);
        const refusal = importRefusal(tracker);
        if (refusal) throw new CliError(refusal);
        const plan = files.map((file) => {
          const named = formatOfName(file);
          const chosen = flags.format ?? named.format;
          if (!chosen) throw new CliError(`${file}: cannot tell its format from its name; say it with --format ${IMPORT_FORMATS.join('|')}`);
          let size: number;
          try {
            size = statSync(file).size;
          } catch (err) {
            throw new CliError(`${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
          }
          return { file, format: chosen, gzip: named.gzip, size };
        });
        // As live ingest is refused past Redis's high watermark, an import waits there.
        const memory = new MemoryBudget(redis, connectorLogger(), config.memory).start();
        const lane = new ImportLane(redis, config.keyspace, { memoryFull: () => memory.snapshot().state === 'full' });
        const totalBytes = plan.reduce((n, p) => n + p.size, 0);
        // Bytes of the files read say how far it is; records a second say how fast.
        const progress = createProgress(`import ${trackerId}`, process.stderr, `import ${trackerId} [{bar}] {percentage}% | {records} records, {rate}/s | ETA {eta_formatted}`);
        const started = Date.now();
        const summaries: FileSummary[] = [];
        let doneBytes = 0;
        let imported = 0;
        try {
          for (const p of plan) {
            const input = createReadStream(p.file);
            let read = 0;
            input.on('data', (chunk) => (read += chunk.length));
            const summary = await importRecords(readImport(input, p.format, p.gzip), {
              tracker,
              kind: flags.resource,
              limits: config.limits,
              sink: lane,
              onProgress: (at) => {
                const records = imported + at.imported;
                progress.update(doneBytes + read, totalBytes, { records, rate: Math.round(records / Math.max(0.001, (Date.now() - started) / 1000)) });
              },
            }).catch((err: unknown) => {
              throw err instanceof ImportInputError || (err as NodeJS.ErrnoException).code === 'Z_DATA_ERROR' ? new CliError(`${p.file}: ${(err as Error).message}`) : err;
            });
            doneBytes += p.size;
            imported += summary.imported;
            summaries.push({ file: p.file, format: p.format, ...summary });
          }
        } finally {
          progress.stop();
          memory.stop();
        }
        print(flags.json ? json(summaries) : summaries.map(renderSummary).join('\n'));
        if (summaries.every((s) => s.imported === 0) && summaries.some((s) => s.failed > 0)) process.exitCode = 1;
      }),
    );
}
