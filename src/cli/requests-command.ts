import { InvalidArgumentError, type Command } from 'commander';
import { STATUS_FILTER, type RequestFilter } from '../core/requests/request-history';
import { CliError, withContext } from './context';
import { json } from './render';
import { renderRequests } from './render-requests';

interface RequestsOptions {
  status?: string;
  code?: string;
  text?: string;
  limit: number;
  unknownToken?: boolean;
  json?: boolean;
}

function status(value: string): string {
  if (!STATUS_FILTER.test(value)) throw new InvalidArgumentError('a status (401), a class (4xx), accepted or refused');
  return value;
}

function code(value: string): string {
  if (!/^ERR_[A-Z0-9_]+$/i.test(value)) throw new InvalidArgumentError('an error code, e.g. ERR_INVALID_FIELD');
  return value;
}

function limit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError('an integer from 1 to 1000');
  return n;
}

export function registerRequestsCommands(program: Command): void {
  program
    .command('requests')
    .description("a tracker's last requests, accepted and refused with the reason (or, with --unknown-token, the relay's requests whose token matched no tracker), newest first")
    .argument('[tracker]', 'tracker id')
    .option('--status <status>', 'only this status (401), class (4xx), accepted or refused', status)
    .option('--code <code>', 'only this error code (ERR_…)', code)
    .option('--text <text>', 'only requests with this text in the path, query, message, user agent or IP (any case)')
    .option('--limit <n>', 'requests shown at most (1 to 1000)', limit, 50)
    .option('--unknown-token', 'the relay-wide list of requests with an unknown or revoked token')
    .option('--json', 'print JSON: {total, matched, entries}')
    .action((trackerId: string | undefined, opts: RequestsOptions) =>
      withContext(async ({ service, requests }) => {
        if ((trackerId === undefined) === !opts.unknownToken) throw new CliError('name a tracker, or pass --unknown-token for the requests whose token matched no tracker (not both).');
        const filter: RequestFilter = { status: opts.status, code: opts.code, text: opts.text, limit: opts.limit };
        const page = trackerId === undefined ? await requests.listUnknownToken(filter) : await requests.list((await service.getTracker(trackerId)).id, filter);
        const what = trackerId === undefined ? 'unknown tokens' : `tracker ${trackerId}`;
        const filtered = opts.status !== undefined || opts.code !== undefined || opts.text !== undefined;
        process.stdout.write(`${opts.json ? json(page) : renderRequests(page, what, filtered)}\n`);
      }),
    );
}
