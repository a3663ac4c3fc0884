import type { DeadLetter } from '../../jobs/delivery/dead-letters';
import type { TrackedRecord } from '../core/records/types';
import { table } from './render';

/** What names the record to a person: an event by its name, a user or session by its key. */
function recordKey(r: TrackedRecord): string {
  if (r.kind === 'event') return `_event=${r.event ?? '?'}${r.uid ? ` _uid=${r.uid}` : ''}`;
  if (r.kind === 'user') return `_uid=${r.uid ?? '?'}`;
  return `_sid=${r.sid ?? '?'}${r.uid ? ` _uid=${r.uid}` : ''}`;
}

function errorText(e: DeadLetter['error']): string {
  return `${e.kind}${e.status === undefined ? '' : ` ${e.status}`}: ${e.message}`;
}

export function renderDeadLetters(trackerId: string, destinationId: string, entries: DeadLetter[], total: number): string {
  const where = `${trackerId}/${destinationId}`;
  if (total === 0) return `No dead letters for ${where}.`;
  const rows = entries.map((d) => [d.entryId, d.failedAt, d.record.kind, d.record.id, recordKey(d.record), errorText(d.error)]);
  const shown = entries.length < total ? `Showing the oldest ${entries.length} of ${total} dead letters for ${where}` : `${total} dead letter${total === 1 ? '' : 's'} for ${where}`;
  const hint = `Send them again: tributary dlq replay ${trackerId} ${destinationId} [--id <entry>...]`;
  return [`${shown}:`, table([['ENTRY', 'FAILED AT', 'KIND', 'RECORD ID', 'KEY', 'ERROR'], ...rows]), '', hint].join('\n');
}

export function renderMoved(verb: 'Replayed' | 'Discarded', trackerId: string, destinationId: string, moved: number, asked: number | undefined): string {
  const noun = `dead letter${moved === 1 ? '' : 's'}`;
  const missing = asked !== undefined && moved < asked ? ` (${asked - moved} of the ids given were not in the store)` : '';
  const after = verb === 'Replayed' && moved > 0 ? '; they are queued for delivery again' : '';
  return `${verb} ${moved} ${noun} of ${trackerId}/${destinationId}${missing}${after}.`;
}
