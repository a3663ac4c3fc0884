import { InvalidArgumentError, type Command } from 'commander';
import { CliError, withContext } from './context';
import { BACKFILL_RESOURCES, type BackfillResource } from '../../jobs/history/backfill';
import type { BackfillView, DeliveryAdmin } from '../operator/delivery-admin';
import { createProgress } from './progress';
import { parseMoment } from './time-args';
import { renderBackfill } from './render-rules';
import { json } from './render';
import { renderAdded, renderArchive, renderDestinationList, renderTestResult } from './render-destinations';
import { renderDestination, renderDestinationSummary, renderPreview } from './render-rules';
import { addRuleOptions, givesRules, rulesFromFlags, type RuleFlags } from './rule-args';
import { collectSetting, mergeSettings, parseSettingsJson, type SettingPair } from './settings-args';

interface JsonFlag {
  json?: boolean;
}

interface AddOptions extends JsonFlag, RuleFlags {
  type: string;
  id?: string;
  setting?: SettingPair[];
  settingsJson?: Record<string, unknown>;
  disabled?: boolean;
}

interface UpdateOptions extends JsonFlag, RuleFlags {
  setting?: SettingPair[];
  settingsJson?: Record<string, unknown>;
}

interface PreviewOptions extends JsonFlag, RuleFlags {
  limit: number;
}

interface BackfillOptions extends JsonFlag {
  since?: Date;
  until?: Date;
  resources?: BackfillResource[];
  cancel?: boolean;
  detach?: boolean;
}

function resources(value: string): BackfillResource[] {
  const list = value.split(',').map((r) => r.trim()).filter(Boolean);
  const unknown = list.filter((r) => !(BACKFILL_RESOURCES as readonly string[]).includes(r));
  if (list.length === 0 || unknown.length > 0) throw new InvalidArgumentError(`expected ${BACKFILL_RESOURCES.join(', ')}, separated by commas; got ${value}.`);
  return list as BackfillResource[];
}

/** How often a backfill's progress is read while the command waits for it. */
const BACKFILL_POLL_MS = 500;

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError('expected a whole number from 1 to 1000.');
  return n;
}

interface TestOptions extends JsonFlag {
  timeout: number;
}

function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a number of seconds above 0.');
  return n;
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

const ADD_HELP = `
Settings are checked by the destination type's own schema; a bad one is refused by name.
A --setting value is read as JSON when it parses (true, false, 42, {"a":1}), else as text;
quote it as JSON to force text: --setting 'sheetId="123"'.

Rules choose which records the destination receives and in what shape (docs/rules.md): the
filter runs first, on the record as accepted, then the sample, then flatten, keep/drop, rename.

Examples:
  tributary destinations add shop --type local
  tributary destinations add shop --type local --id archive --setting path=archive/shop.duckdb --setting maxColumns=200
  tributary destinations add shop --type local --settings-json '{"releaseAfterIdleMs":5000}' --disabled
  tributary destinations add shop --type google-sheets --id marketing --setting spreadsheetId=1AbC… --setting tab={_event} \\
    --filter "_type == 'event' && _event in ['signup', 'order']" --keep total,currency,plan --rename total=amount`;

const UPDATE_HELP = `
--setting changes one setting and keeps the others; --settings-json replaces them all. A rule flag
replaces that rule and keeps the others; --clear-rules removes them all first. A change reaches
every process within a second and applies to the records routed after it; records already queued
for the destination are delivered as they were routed.

Examples:
  tributary destinations update shop marketing --filter "_event == 'order' && total >= 10"
  tributary destinations update shop marketing --drop email,phone --flatten
  tributary destinations update shop marketing --clear-rules`;

export function registerDestinationsCommands(program: Command): void {
  const destinations = program
    .command('destinations')
    .description("manage a tracker's destinations: where its records are delivered (every record goes to each enabled one)");

  const add = destinations
    .command('add')
    .description('add a destination to a tracker, with the rules that choose what it receives')
    .argument('<tracker>', 'tracker id')
    .requiredOption('--type <type>', 'destination type, e.g. local')
    .option('--id <id>', 'destination id: lowercase letters, digits, _ and - (default: the type, numbered if taken)')
    .option('--setting <key=value...>', 'one setting; repeatable', collectSetting)
    .option('--settings-json <json>', 'all settings as one JSON object; --setting values override its keys', parseSettingsJson)
    .option('--disabled', 'add it disabled: nothing is sent to it until `destinations enable`')
    .option('--json', 'print the stored destination as JSON')
    .addHelpText('after', ADD_HELP)
    .action((trackerId: string, opts: AddOptions) =>
      withContext(async ({ destinations: service }) => {
        const settings = mergeSettings(opts.settingsJson, opts.setting);
        const rules = rulesFromFlags(undefined, opts) ?? undefined;
        const added = await service.add(trackerId, { type: opts.type, id: opts.id, settings, enabled: !opts.disabled, ...(rules ? { rules } : {}) });
        print(opts.json ? json(added) : renderAdded(trackerId, added, service.setupGuide(added.type)));
      }),
    );
  addRuleOptions(add, false);

  const update = destinations
    .command('update')
    .description("change a destination's settings or rules")
    .argument('<tracker>', 'tracker id')
    .argument('<id>', 'destination id')
    .option('--setting <key=value...>', 'one setting; repeatable; the others are kept', collectSetting)
    .option('--settings-json <json>', 'all settings as one JSON object, replacing them', parseSettingsJson)
    .option('--json', 'print the stored destination as JSON')
    .addHelpText('after', UPDATE_HELP)
    .action((trackerId: string, id: string, opts: UpdateOptions) =>
      withContext(async ({ destinations: service }) => {
        if (!opts.setting && !opts.settingsJson && !givesRules(opts)) throw new InvalidArgumentError('nothing to change: give --setting, --settings-json, a rule flag or --clear-rules.');
        const current = await service.get(trackerId, id);
        const settings = opts.settingsJson ? mergeSettings(opts.settingsJson, opts.setting) : opts.setting ? mergeSettings(current.settings, opts.setting) : undefined;
        const rules = rulesFromFlags(current.rules, opts);
        const updated = await service.update(trackerId, id, { settings, ...(rules !== undefined ? { rules } : {}) });
        print(opts.json ? json(updated) : `Updated destination ${id} of tracker ${trackerId}.\n${renderDestinationSummary(trackerId, updated)}`);
      }),
    );
  addRuleOptions(update, true);

  destinations
    .command('show')
    .description('show one destination: its settings, its rules, its delivery status and what its rules kept from it')
    .argument('<tracker>', 'tracker id')
    .argument('<id>', 'destination id')
    .option('--json', 'print JSON: the destination with its settings, rules and status')
    .action((trackerId: string, id: string, opts: JsonFlag) =>
      withContext(async ({ admin }) => {
        const found = (await admin.listWithStatus(trackerId)).find((d) => d.id === id);
        if (!found) throw new CliError(`Tracker ${trackerId} has no destination ${id}.`);
        print(opts.json ? json(found) : renderDestination(trackerId, found));
      }),
    );

  destinations
    .command('backfill')
    .description("send the tracker's archived records of a time range to one destination again, through its rules, in a lane that yields to live records; events already there are not doubled")
    .argument('<tracker>', 'tracker id')
    .argument('<dest>', 'destination id')
    .option('--since <time>', 'start of the range of _received_at: a date or time, or a time ago (30d, 12h) (default: as far back as the archive keeps)', (v) => parseMoment(v))
    .option('--until <time>', 'end of the range (default: now)', (v) => parseMoment(v))
    .option('--resources <list>', 'what to send, comma-separated, from events, users, sessions (default: all three; users and sessions as they are now, merged from every update since --since)', resources)
    .option('--detach', 'start it and return at once; `destinations list` and `show` show its progress')
    .option('--cancel', 'cancel the backfill under way (what its lane already holds is still delivered)')
    .option('--json', 'print JSON: the backfill as it ended (or as it started, with --detach)')
    .addHelpText('after', '\nThe backfill runs in the workers and survives a restart; this command only follows it. Ctrl-C stops following, not the backfill.\nRunning it again doubles nothing: events are written as re-sends, kept once by their _id.')
    .action((trackerId: string, destinationId: string, opts: BackfillOptions) =>
      withContext(async ({ admin, service }) => {
        if (opts.cancel) {
          const cancelled = await admin.cancelBackfill(trackerId, destinationId);
          return print(cancelled ? `Backfill of ${destinationId} cancelled; what its lane holds is still delivered.` : `No backfill of ${destinationId} is under way.`);
        }
        const tracker = await service.getTracker(trackerId);
        const until = opts.until ?? new Date();
        const since = opts.since ?? new Date(until.getTime() - tracker.archiveDays * 86_400_000);
        let view = await admin.startBackfill(trackerId, destinationId, { since, until, resources: opts.resources });
        if (!opts.json) print(`Backfill of ${destinationId} started: ${view.resources.join(', ')} received from ${view.since} to ${view.until}.`);
        if (!opts.detach) view = await followBackfill(admin, trackerId, destinationId);
        print(opts.json ? json(view) : renderBackfill(destinationId, view));
      }),
    );

  const preview = destinations
    .command('preview')
    .description("run a destination's rules, or the rules given as flags, over the tracker's last records, and show what would be delivered and what skipped")
    .argument('<tracker>', 'tracker id')
    .argument('<dest>', 'destination id: its saved rules, or with rule flags the rules `destinations update` would save with the same flags')
    .option('--limit <n>', 'the most recent records to run them over (at most 1000)', count, 100)
    .option('--json', 'print JSON: each record with its outcome, and the counts')
    .action((trackerId: string, destinationId: string, opts: PreviewOptions) =>
      withContext(async ({ destinations: service, preview: previewer }) => {
        const current = await service.get(trackerId, destinationId);
        const rules = givesRules(opts) ? (rulesFromFlags(current.rules, opts) ?? {}) : undefined;
        const result = await previewer.preview({ trackerId, destinationId, rules, limit: opts.limit });
        print(opts.json ? json(result) : renderPreview(result));
      }),
    );
  addRuleOptions(preview, true);

  destinations
    .command('list')
    .description("list a tracker's destinations with their delivery status: queued, delivered, dead-lettered, lag, last error, paused")
    .argument('<tracker>', 'tracker id')
    .option('--json', 'print JSON: each destination with its settings and status')
    .addHelpText('after', '\nLAG is the age of the oldest record not yet delivered. A paused destination waits for its settings or access to be fixed; its records stay queued.')
    .action((trackerId: string, opts: JsonFlag) =>
      withContext(async ({ admin }) => {
        const [list, backlog, archive] = await Promise.all([admin.listWithStatus(trackerId), admin.backlog(trackerId), admin.archive(trackerId)]);
        print(opts.json ? json(list) : `${renderDestinationList(trackerId, list, backlog)}\n\n${renderArchive(trackerId, archive)}`);
      }),
    );

  destinations
    .command('remove')
    .description('remove a destination: records are no longer sent to it, and what was queued for it and its dead letters are discarded')
    .argument('<tracker>', 'tracker id')
    .argument('<id>', 'destination id')
    .action((trackerId: string, id: string) =>
      withContext(async ({ admin }) => {
        const { queued, deadLetters } = await admin.removeDestination(trackerId, id);
        const discarded = queued + deadLetters > 0 ? ` Discarded ${queued} queued record${queued === 1 ? '' : 's'} and ${deadLetters} dead letter${deadLetters === 1 ? '' : 's'}.` : '';
        print(`Removed destination ${id} from tracker ${trackerId}.${discarded}`);
      }),
    );

  for (const [name, enabled] of [['enable', true], ['disable', false]] as const) {
    destinations
      .command(name)
      .description(enabled ? 'resume delivery to a destination, starting with the records queued while it was disabled' : 'pause delivery to a destination; records accepted meanwhile stay queued for it until it is enabled')
      .argument('<tracker>', 'tracker id')
      .argument('<id>', 'destination id')
      .action((trackerId: string, id: string) =>
        withContext(async ({ destinations: service }) => {
          await service.update(trackerId, id, { enabled });
          print(`Destination ${id} of tracker ${trackerId} is ${enabled ? 'enabled' : 'disabled'}.`);
        }),
      );
  }

  destinations
    .command('test')
    .description('check a destination with a harmless round trip (e.g. make sure its tables exist); prints OK or exactly what is wrong, and exits 1 when not OK')
    .argument('<tracker>', 'tracker id')
    .argument('<id>', 'destination id')
    .option('--timeout <seconds>', 'give up after this long', seconds, 30)
    .option('--json', 'print JSON: {"ok": true} or {"ok": false, "error": {"kind", "message"}}')
    .action((trackerId: string, id: string, opts: TestOptions) =>
      withContext(async ({ destinations: service }) => {
        const result = await service.test(trackerId, id, opts.timeout * 1000);
        print(opts.json ? json(result) : renderTestResult(trackerId, id, result));
        if (!result.ok) process.exitCode = 1;
      }),
    );
}

/** Waits for a backfill to be read and its lane delivered, with a progress bar on a terminal (the share of the range read). */
async function followBackfill(admin: DeliveryAdmin, trackerId: string, destinationId: string): Promise<BackfillView> {
  const progress = createProgress(`backfill ${destinationId}`);
  try {
    for (;;) {
      const view = (await admin.backfill(trackerId, destinationId))!;
      const since = Date.parse(view.since);
      const span = Math.max(1, Math.min(Date.now(), Date.parse(view.until)) - since);
      const readShare = view.state === 'running' ? Math.max(0, Math.min(1, ((view.readThrough ?? since) - since) / span)) : 1;
      progress.update(Math.round(readShare * 1000), 1000);
      if (view.state !== 'running' && view.waiting === 0) return view;
      await new Promise((r) => setTimeout(r, BACKFILL_POLL_MS));
    }
  } finally {
    progress.stop();
  }
}
