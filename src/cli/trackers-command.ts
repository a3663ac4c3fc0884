import { InvalidArgumentError, Option, type Command } from 'commander';
import { buildIntegrationView, renderIntegrationViewText } from '../operator/integration-view';
import { activeTokens } from '../core/trackers/types';
import { MAX_PARTITIONS } from '../core/redis/keyspace';
import { withContext } from './context';
import { accessOf } from './access-commands';
import { removeTracker } from '../operator/remove-tracker';
import { json, renderTrackerDetails, renderTrackerList, tokenHint } from './render';

interface JsonFlag {
  json?: boolean;
}

interface SettingOptions {
  timeZone?: string;
  corsOrigin?: string[];
  rateLimit?: number;
  captureContext?: boolean;
  dedupWindow?: number;
  partitions?: number;
  archiveDays?: number;
  invalidUnicode?: 'reject' | 'replace';
}

interface CreateOptions extends JsonFlag, SettingOptions {
  name: string;
  id?: string;
}

interface UpdateOptions extends JsonFlag, SettingOptions {
  name?: string;
}

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number of records per second.');
  return n;
}

function windowHours(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 168) throw new InvalidArgumentError('expected a whole number of hours from 0 (off) to 168 (7 days).');
  return n;
}

function partitionCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PARTITIONS) throw new InvalidArgumentError(`expected a whole number of partitions from 1 to ${MAX_PARTITIONS}.`);
  return n;
}

function archiveDays(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 3650) throw new InvalidArgumentError('expected a whole number of days from 0 (no archive) to 3650.');
  return n;
}

const ARCHIVE_DAYS_HELP = 'days of accepted records kept in the archive, for backfills and replays; 0 keeps none (default: 30)';

const PARTITIONS_HELP = 'partitions records are spread over by key (_uid, _sid), routed and delivered in parallel; can grow, never shrink (default: 1)';

const DEDUP_WINDOW_HELP = 'hours a client key (_id, Idempotency-Key) is remembered; 0 turns deduplication off (default: 24, at most 168)';

/** The settings both create and update take, as the service's input. */
function settingsOf(opts: SettingOptions) {
  return {
    timeZone: opts.timeZone,
    corsOrigins: opts.corsOrigin,
    rateLimit: opts.rateLimit === undefined ? undefined : { recordsPerSecond: opts.rateLimit },
    captureContext: opts.captureContext,
    dedupWindowHours: opts.dedupWindow,
    partitions: opts.partitions,
    archiveDays: opts.archiveDays,
    invalidUnicode: opts.invalidUnicode,
  };
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Registered through `program.command()` so the subcommands inherit the program's output settings. */
export function registerTrackersCommands(program: Command): void {
  const trackers = program.command('trackers').description('manage trackers: tokens, time zone, CORS origins, rate limit');

  trackers
    .command('create')
    .description('create a tracker and its first token, and print its integration view')
    .requiredOption('--name <name>', 'display name')
    .option('--id <id>', 'tracker id: lowercase letters, digits, _ and - (default: derived from the name)')
    .option('--time-zone <zone>', 'IANA time zone for _event_at sent without an offset (default: UTC)')
    .option('--cors-origin <origin...>', 'browser origins allowed to send, e.g. https://shop.example (default: any)')
    .option('--rate-limit <records/s>', 'sustained records per second, per API process (default: no limit)', positiveNumber)
    .option('--capture-context', 'store client IP, user agent and referer with each record (default: off)')
    .option('--dedup-window <hours>', DEDUP_WINDOW_HELP, windowHours)
    .option('--partitions <n>', PARTITIONS_HELP, partitionCount)
    .option('--archive-days <days>', ARCHIVE_DAYS_HELP, archiveDays)
    .addOption(new Option('--invalid-unicode <mode>', 'text with a lone UTF-16 surrogate: reject (400) or replace with U+FFFD (default: reject)').choices(['reject', 'replace']))
    .option('--json', 'print JSON')
    .action((opts: CreateOptions) =>
      withContext(async ({ service, config }) => {
        const { tracker, token } = await service.createTracker({ name: opts.name, id: opts.id, ...settingsOf(opts) });
        const integration = buildIntegrationView(tracker, token, config.publicUrl);
        if (opts.json) return print(json({ tracker, token, integration }));
        print(`Created tracker ${tracker.id} (${tracker.name}).\nToken: ${token}\n\n${renderIntegrationViewText(integration)}`);
      }),
    );

  trackers
    .command('update')
    .description('change the settings of a tracker; those not given stay as they are')
    .argument('<id>', 'tracker id')
    .option('--name <name>', 'display name')
    .option('--time-zone <zone>', 'IANA time zone for _event_at sent without an offset')
    .option('--cors-origin <origin...>', 'browser origins allowed to send (replaces the list)')
    .option('--rate-limit <records/s>', 'sustained records per second, per API process', positiveNumber)
    .option('--capture-context', 'store client IP, user agent and referer with each record')
    .option('--no-capture-context', 'stop storing the request context')
    .option('--dedup-window <hours>', DEDUP_WINDOW_HELP, windowHours)
    .option('--partitions <n>', PARTITIONS_HELP, partitionCount)
    .option('--archive-days <days>', ARCHIVE_DAYS_HELP, archiveDays)
    .addOption(new Option('--invalid-unicode <mode>', 'text with a lone UTF-16 surrogate: reject (400) or replace with U+FFFD (default: reject)').choices(['reject', 'replace']))
    .option('--json', 'print JSON')
    .action((id: string, opts: UpdateOptions) =>
      withContext(async ({ service }) => {
        const tracker = await service.updateTracker(id, { name: opts.name, ...settingsOf(opts) });
        print(opts.json ? json(tracker) : renderTrackerDetails(tracker));
      }),
    );

  trackers
    .command('list')
    .description('list trackers')
    .option('--json', 'print JSON (full trackers, tokens included)')
    .action((opts: JsonFlag) =>
      withContext(async ({ service }) => {
        const { trackers: all, unreadable } = await service.listTrackers();
        print(opts.json ? json(all) : renderTrackerList(all));
        // On stderr, so that --json stays the list of trackers that scripts read.
        for (const { id, reason } of unreadable) process.stderr.write(`tributary: tracker ${id} cannot be read and is not listed: ${reason}\n`);
      }),
    );

  trackers
    .command('remove')
    .description('remove a tracker: its tokens stop at once, and its destinations with what was queued for them, its dead letters and its records not yet routed are discarded (archive files and a local warehouse file stay)')
    .argument('<id>', 'tracker id')
    .requiredOption('--yes', 'confirm: this cannot be undone')
    .option('--json', 'print JSON')
    .action((id: string, opts: JsonFlag) =>
      withContext(async (ctx) => {
        const removed = await removeTracker(ctx.admin, accessOf(ctx), id);
        if (opts.json) return print(json(removed));
        const { queued, deadLetters, backlog } = removed.discarded;
        const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
        const { people, tokens } = removed.revoked;
        const roles = people + tokens > 0 ? ` Took its roles away from ${people === 1 ? '1 person' : `${people} people`} and ${plural(tokens, 'token')}.` : '';
        print(`Removed tracker ${id}${removed.destinations.length > 0 ? ` and its destinations ${removed.destinations.join(', ')}` : ''}. Discarded ${plural(queued, 'queued record')}, ${plural(deadLetters, 'dead letter')} and ${plural(backlog, 'record')} waiting for a destination.${roles}`);
      }),
    );

  trackers
    .command('show')
    .description("print a tracker, its tokens, and the integration view of its first active token")
    .argument('<id>', 'tracker id')
    .option('--json', 'print JSON')
    .action((id: string, opts: JsonFlag) =>
      withContext(async ({ service, config }) => {
        const tracker = await service.getTracker(id);
        const first = activeTokens(tracker)[0];
        const integration = first ? buildIntegrationView(tracker, first.token, config.publicUrl) : null;
        if (opts.json) return print(json({ tracker, integration }));
        const view = integration ? renderIntegrationViewText(integration) : `No active token: run \`tributary trackers rotate-token ${tracker.id}\`.`;
        print(`${renderTrackerDetails(tracker)}\n\n${view}`);
      }),
    );

  trackers
    .command('rotate-token')
    .description('add a new token; the old ones keep working until revoked')
    .argument('<id>', 'tracker id')
    .option('--json', 'print JSON')
    .action((id: string, opts: JsonFlag) =>
      withContext(async ({ service }) => {
        const { tracker, token } = await service.rotateToken(id);
        if (opts.json) return print(json({ tracker, token }));
        const others = activeTokens(tracker).filter((t) => t.token !== token);
        print(`New token for tracker ${tracker.id}: ${token}`);
        if (others.length > 0) {
          print('The older tokens stay active; once clients use the new one, revoke them:');
          for (const t of others) print(`  tributary trackers revoke-token ${tracker.id} ${t.token.slice(0, 12)}`);
        }
      }),
    );

  trackers
    .command('revoke-token')
    .description('revoke a token (the last active one cannot be revoked)')
    .argument('<id>', 'tracker id')
    .argument('<token>', 'the token, or a unique prefix of at least 8 characters')
    .option('--json', 'print JSON')
    .action((id: string, token: string, opts: JsonFlag) =>
      withContext(async ({ service }) => {
        const result = await service.revokeToken(id, token);
        if (opts.json) return print(json(result));
        const hint = tokenHint(result.revoked.token);
        print(result.alreadyRevoked ? `Token ${hint} of tracker ${id} was already revoked (${result.revoked.revokedAt}).` : `Revoked token ${hint} of tracker ${id}; API processes stop accepting it within their token cache time.`);
      }),
    );
}
