import { useState } from 'preact/hooks';
import { api } from './api.js';
import { useAction } from './hooks.js';
import { Alert, Field, Status } from './components.js';
import { formatCount, formatTime } from './format.js';
import type { Backfill, DestinationView } from './types.js';

/** The share of a running backfill's range read so far, 0 to 1. */
function share(b: Backfill): number {
  if (b.state !== 'running') return 1;
  const since = Date.parse(b.since);
  const span = Math.max(1, Math.min(Date.now(), Date.parse(b.until)) - since);
  return Math.max(0, Math.min(1, ((b.readThrough ?? since) - since) / span));
}

/** `2026-11-20` → its midnight UTC, as the admin API takes it. */
const dayStart = (day: string) => (day ? new Date(`${day}T00:00:00Z`).toISOString() : undefined);

/**
 * A destination's backfill: the history kept in the tracker's archive, sent again through the
 * destination's rules (docs/history.md, "Backfill and replay"): started here, followed, cancelled.
 */
export function BackfillCard({ trackerId, destination, onChanged, editor = true }: { trackerId: string; destination: DestinationView; onChanged: () => void; editor?: boolean }) {
  const [since, setSince] = useState('');
  const [until, setUntil] = useState('');
  const [upserts, setUpserts] = useState(true);
  const action = useAction();
  const { busy, error, status } = action;
  const b = destination.backfill;
  const running = b?.state === 'running';

  const run = (change: () => Promise<unknown>, done: string) =>
    action.run(async () => {
      await change();
      onChanged();
    }, done);

  const start = (e: Event) => {
    e.preventDefault();
    const untilIso = until ? new Date(Date.parse(`${until}T00:00:00Z`) + 86_400_000).toISOString() : undefined;
    void run(() => api.destinations.backfill(trackerId, destination.id, { since: dayStart(since), until: untilIso, resources: upserts ? ['events', 'users', 'sessions'] : ['events'] }), 'Backfill started: it runs in the workers; this page follows it.');
  };

  return (
    <section class="card" aria-labelledby="backfill-heading" data-testid="backfill-card">
      <h2 id="backfill-heading">Backfill</h2>
      <p class="hint">Sends the events, users and sessions kept in the tracker's archive to {destination.id} again, through its rules as they are now, in a lane that yields to live records. Events already there are not doubled; users and sessions go as they are now.</p>
      {b && (
        <p role="status" data-testid="backfill-progress">
          {b.state === 'running' ? `Under way, ${Math.round(share(b) * 100)} % of the range read` : b.state === 'cancelled' ? `Cancelled at ${formatTime(b.finishedAt ?? '')}` : `Read at ${formatTime(b.finishedAt ?? '')}`}: {formatCount(b.read)} archived records read, {formatCount(b.queued)} sent through its rules
          {b.states > 0 ? `, ${formatCount(b.states)} users and sessions as they are now` : ''}
          {b.waiting > 0 ? `, ${formatCount(b.waiting)} still in its lane` : ', all delivered'} ({b.resources.join(', ')} received {formatTime(b.since)} to {formatTime(b.until)}).
        </p>
      )}
      {editor && (
        <form onSubmit={start} noValidate aria-label={`Backfill ${destination.id}`}>
          <div class="field-row">
            <Field label="From (UTC day)" hint="Empty: as far back as the archive keeps.">
              {(p) => <input {...p} type="date" value={since} onInput={(e) => setSince(e.currentTarget.value)} />}
            </Field>
            <Field label="To (UTC day, included)" hint="Empty: up to now.">
              {(p) => <input {...p} type="date" value={until} onInput={(e) => setUntil(e.currentTarget.value)} />}
            </Field>
          </div>
          <Field inline label="Users and sessions too" hint="Each as it is now, merged from its updates since the start day, in order with its live updates. Untick to send events only.">
            {(p) => <input {...p} type="checkbox" checked={upserts} onChange={(e) => setUpserts(e.currentTarget.checked)} />}
          </Field>
          <Alert message={error} />
          <div class="actions">
            <button class="button" type="submit" disabled={busy || running}>
              Start backfill
            </button>
            {running && (
              <button class="button ghost" type="button" disabled={busy} onClick={() => void run(() => api.destinations.cancelBackfill(trackerId, destination.id), 'Backfill cancelled; what its lane holds is still delivered.')}>
                Cancel backfill
              </button>
            )}
            <Status message={status} />
          </div>
        </form>
      )}
    </section>
  );
}
