import { InvalidArgumentError, type Command } from 'commander';
import { withContext } from './context';
import { json } from './render';
import { renderAdded, renderDestinationList, renderTestResult } from './render-destinations';
import { collectSetting, mergeSettings, parseSettingsJson, type SettingPair } from './settings-args';

interface JsonFlag {
  json?: boolean;
}

interface AddOptions extends JsonFlag {
  type: string;
  id?: string;
  setting?: SettingPair[];
  settingsJson?: Record<string, unknown>;
  disabled?: boolean;
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

Examples:
  tributary destinations add shop --type local
  tributary destinations add shop --type local --id archive --setting path=archive/shop.duckdb --setting maxColumns=200
  tributary destinations add shop --type local --settings-json '{"releaseAfterIdleMs":5000}' --disabled`;

export function registerDestinationsCommands(program: Command): void {
  const destinations = program
    .command('destinations')
    .description("manage a tracker's destinations: where its records are delivered (every record goes to each enabled one)");

  destinations
    .command('add')
    .description('add a destination to a tracker')
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
        const added = await service.add(trackerId, { type: opts.type, id: opts.id, settings, enabled: !opts.disabled });
        print(opts.json ? json(added) : renderAdded(trackerId, added));
      }),
    );

  destinations
    .command('list')
    .description("list a tracker's destinations with their delivery status: queued, delivered, dead-lettered, lag, last error, paused")
    .argument('<tracker>', 'tracker id')
    .option('--json', 'print JSON: each destination with its settings and status')
    .addHelpText('after', '\nLAG is the age of the oldest record not yet delivered. A paused destination waits for its settings or access to be fixed; its records stay queued.')
    .action((trackerId: string, opts: JsonFlag) =>
      withContext(async ({ admin }) => {
        const [list, backlog] = await Promise.all([admin.listWithStatus(trackerId), admin.backlog(trackerId)]);
        print(opts.json ? json(list) : renderDestinationList(trackerId, list, backlog));
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
