import path from 'node:path';
import { Option, type Command } from 'commander';
import type { ExportFormat } from '../../connectors/local';
import { withContext } from './context';
import { renderResultTable, toJson } from './render-query';

interface QueryOptions {
  json?: boolean;
  destination?: string;
}

interface ExportOptions {
  format: ExportFormat;
  out?: string;
  destination?: string;
  json?: boolean;
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

const QUERY_HELP = `
The warehouse is opened read-only: statements that write are refused. A worker writing to it
hands the file over and resumes after the query. Tables: users, sessions, events.

Examples:
  tributary query shop "select _event, count(*) as n from events group by 1 order by n desc"
  tributary query shop "select _uid, _properties->>'plan' as plan from users limit 10" --json`;

const destinationOption = () => new Option('--destination <id>', 'the local destination to read, when the tracker has several');

/** `query` and `export`: reads of a tracker's local warehouse (the `local` destination's DuckDB file under DATA_DIR). */
export function registerWarehouseCommands(program: Command): void {
  program
    .command('query')
    .description("run SQL on a tracker's local warehouse and print the result as a table")
    .argument('<tracker>', 'tracker id')
    .argument('<sql>', 'DuckDB SQL, quoted as one argument')
    .addOption(destinationOption())
    .option('--json', 'print JSON: {"columns": [...], "rows": [[...], ...]}; 64-bit integers and timestamps as strings')
    .addHelpText('after', QUERY_HELP)
    .action((trackerId: string, sql: string, opts: QueryOptions) =>
      withContext(async ({ admin }) => {
        const result = await admin.query(trackerId, sql, opts.destination);
        print(opts.json ? toJson({ columns: result.columns, rows: result.rows }, 2) : renderResultTable(result));
      }),
    );

  program
    .command('export')
    .description("write a tracker's users, sessions and events tables to files: <out>/users.<format>, sessions.<format>, events.<format>")
    .argument('<tracker>', 'tracker id')
    .addOption(new Option('--format <format>', 'file format').choices(['parquet', 'csv']).makeOptionMandatory())
    .option('--out <dir>', 'directory to write to, created if missing; files there with the same names are replaced (default: ./<tracker>-export)')
    .addOption(destinationOption())
    .option('--json', 'print JSON: [{"table", "file", "rows"}, ...]')
    .action((trackerId: string, opts: ExportOptions) =>
      withContext(async ({ admin }) => {
        const outDir = path.resolve(opts.out ?? `${trackerId}-export`);
        const files = await admin.export(trackerId, opts.format, outDir, opts.destination);
        if (opts.json) return print(toJson(files, 2));
        const total = files.reduce((n, f) => n + f.rows, 0);
        print(`Exported ${total} rows of tracker ${trackerId} to ${outDir}:`);
        for (const f of files) print(`  ${f.file}  (${f.rows} rows)`);
      }),
    );
}
