import { InvalidArgumentError, type Command } from 'commander';
import { isDeadLetterEntryId, type DeadLetters } from '../../jobs/delivery/dead-letters';
import { withContext } from './context';
import { createProgress } from './progress';
import { json } from './render';
import { renderDeadLetters, renderMoved } from './render-dlq';

interface ListOptions {
  limit: number;
  json?: boolean;
}

interface IdsOption {
  id?: string[];
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('expected a whole number above 0.');
  return n;
}

function collectEntryId(value: string, previous: string[] | undefined): string[] {
  if (!isDeadLetterEntryId(value)) throw new InvalidArgumentError(`"${value}" is not an entry id (like 1718000000000-0, see \`tributary dlq list\`).`);
  return [...(previous ?? []), value];
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

type Move = (store: DeadLetters, ids: string[] | undefined, onProgress: (done: number, total: number) => void) => Promise<number>;

/** Replay and discard differ only in the store method and the words. */
function moveAction(verb: 'Replayed' | 'Discarded', label: string, move: Move) {
  return (trackerId: string, destinationId: string, opts: IdsOption) =>
    withContext(async ({ admin }) => {
      const { destination, store } = await admin.deadLetters(trackerId, destinationId);
      const progress = createProgress(label);
      let moved: number;
      try {
        moved = await move(store, opts.id, (done, total) => progress.update(done, total));
      } finally {
        progress.stop();
      }
      print(renderMoved(verb, trackerId, destinationId, moved, opts.id?.length));
      if (verb === 'Replayed' && moved > 0 && !destination.enabled) print(`The destination is disabled: they wait until \`tributary destinations enable ${trackerId} ${destinationId}\`.`);
    });
}

export function registerDlqCommands(program: Command): void {
  const dlq = program
    .command('dlq')
    .description('dead letters: records a destination refused for good (a bad value, a rejected row), kept per destination')
    .addHelpText('after', '\nAfter fixing the cause (settings, table, data), replay sends the records to the destination again.');

  dlq
    .command('list')
    .description('list dead letters, oldest first: entry id, when and why it failed, and which record')
    .argument('<tracker>', 'tracker id')
    .argument('<destination>', 'destination id (see `tributary destinations list <tracker>`)')
    .option('--limit <n>', 'show at most this many', positiveInt, 100)
    .option('--json', 'print JSON: entries with the full record and error')
    .action((trackerId: string, destinationId: string, opts: ListOptions) =>
      withContext(async ({ admin }) => {
        const { store } = await admin.deadLetters(trackerId, destinationId);
        const [entries, total] = await Promise.all([store.list(opts.limit), store.count()]);
        print(opts.json ? json(entries) : renderDeadLetters(trackerId, destinationId, entries, total));
      }),
    );

  dlq
    .command('replay')
    .description('send dead letters back to the destination for delivery (all of them unless --id is given)')
    .argument('<tracker>', 'tracker id')
    .argument('<destination>', 'destination id')
    .option('--id <entry...>', 'only these entries (ids from `dlq list`); repeatable', collectEntryId)
    .addHelpText('after', '\nRecords that fail again during the replay go back to the dead letters, for a later replay.\nA progress bar is shown on stderr for long replays when it is a terminal.')
    .action(moveAction('Replayed', 'Replaying', (store, ids, onProgress) => store.replay(ids, onProgress)));

  dlq
    .command('discard')
    .description('delete dead letters for good (all of them unless --id is given)')
    .argument('<tracker>', 'tracker id')
    .argument('<destination>', 'destination id')
    .option('--id <entry...>', 'only these entries (ids from `dlq list`); repeatable', collectEntryId)
    .action(moveAction('Discarded', 'Discarding', (store, ids, onProgress) => store.discard(ids, onProgress)));
}
