import { useEffect, useState } from 'preact/hooks';
import { useCanEdit } from './access.js';
import { api, messageOf } from './api.js';
import { Alert, ConfirmButton, Spinner, Status } from './components.js';
import { formatBytes, formatCount, formatDuration, formatTime, json } from './format.js';
import { useLoad } from './hooks.js';
import type { DeadLetter, DestinationView, MemorySnapshot } from './types.js';

const REFRESH_MS = 2000;

/** Delivery figures of every destination, refreshed every 2 s, and their dead letters. */
export function HealthTab({ trackerId }: { trackerId: string }) {
  // Dead letters hold the records themselves: an editor's to read, replay or discard.
  const editor = useCanEdit(trackerId);
  const list = useLoad(() => api.destinations.list(trackerId), trackerId, REFRESH_MS);
  return (
    <>
      <RedisMemory />
      <section class="card" aria-labelledby="health-heading">
        <h2 id="health-heading">Delivery health</h2>
        <p class="hint">Refreshed every 2 seconds.{editor ? '' : ' Dead letters are counted here; their records are shown to the tracker’s editors.'}</p>
        <Alert message={list.error} />
        {!list.data ? list.loading && <Spinner /> : list.data.length === 0 ? <p class="empty">No destination.</p> : <HealthTable destinations={list.data} />}
      </section>
      {editor && list.data?.map((d) => <DeadLetters key={d.id} trackerId={trackerId} destination={d} onChanged={list.reload} />)}
    </>
  );
}

const MEMORY_BADGE: Record<MemorySnapshot['state'], { tone: string; label: string }> = {
  ok: { tone: 'ok', label: 'ok' },
  warning: { tone: 'warn', label: 'above the warn watermark' },
  full: { tone: 'error', label: 'full: ingest refused' },
  unlimited: { tone: 'muted', label: 'no limit known' },
  unknown: { tone: 'muted', label: 'not sampled' },
};

const percentOf = (part: number, whole: number) => `${Math.round((part / whole) * 1000) / 10} %`;

/** Redis memory against the relay's budget: shared by every tracker, so the same on each tracker's tab. */
function RedisMemory() {
  const health = useLoad(() => api.health(), 'health', REFRESH_MS);
  const m = health.data?.memory;
  const badge = m && MEMORY_BADGE[m.state];
  return (
    <section class="card" aria-labelledby="memory-heading" data-testid="redis-memory">
      <div class="destination-head">
        <h2 id="memory-heading">Redis memory</h2>
        {badge && <span class={`badge ${badge.tone}`}>{badge.label}</span>}
      </div>
      <Alert message={health.error} />
      {!m ? (
        health.loading && <Spinner />
      ) : (
        <>
          <dl class="stats">
            <div>
              <dt>Used</dt>
              <dd>
                {m.usedBytes === null ? '—' : formatBytes(m.usedBytes)}
                {m.usedBytes !== null && m.limitBytes ? <span class="muted"> {percentOf(m.usedBytes, m.limitBytes)}</span> : null}
              </dd>
            </div>
            <div>
              <dt>Limit</dt>
              <dd>{m.limitBytes === null ? 'none' : `${formatBytes(m.limitBytes)}${m.limitSource === 'setting' ? ' (REDIS_MAXMEMORY_BYTES)' : ''}`}</dd>
            </div>
            {m.watermarks && m.limitBytes && (
              <>
                <div>
                  <dt>Warn at</dt>
                  <dd>{formatBytes(m.watermarks.warnBytes)}</dd>
                </div>
                <div>
                  <dt>Ingest refused at</dt>
                  <dd>{formatBytes(m.watermarks.highBytes)}</dd>
                </div>
                <div>
                  <dt>Accepted again below</dt>
                  <dd>{formatBytes(m.watermarks.resumeBytes)}</dd>
                </div>
              </>
            )}
          </dl>
          {m.state === 'full' && (
            <p class="hint">
              Every tracker's ingest answers 503 ERR_QUEUE_FULL. Free memory: enable or fix a destination that holds a backlog, discard dead letters, or remove a destination with its queued records.
            </p>
          )}
          {m.state === 'unlimited' && <p class="hint">Redis has no maxmemory and REDIS_MAXMEMORY_BYTES is unset: ingest is never refused for memory, and Redis may grow until the host runs out.</p>}
          {m.policy && m.limitBytes !== null && m.policy !== 'noeviction' && <p class="hint">maxmemory-policy is {m.policy}: at its limit Redis may evict queued records. Set it to noeviction.</p>}
        </>
      )}
    </section>
  );
}

function HealthTable({ destinations }: { destinations: DestinationView[] }) {
  return (
    <div class="table-wrap">
      <table class="numbers" data-testid="health-table">
        <thead>
          <tr>
            <th scope="col">Destination</th>
            <th scope="col">Queued</th>
            <th scope="col">In flight</th>
            <th scope="col">Delivered</th>
            <th scope="col">Failed</th>
            <th scope="col">Lag</th>
            <th scope="col">Last delivery</th>
            <th scope="col">Last error</th>
            <th scope="col">Paused</th>
          </tr>
        </thead>
        <tbody>
          {destinations.map((d) => (
            <tr key={d.id}>
              <th scope="row">
                {d.id} <span class="muted">{d.type}</span>
                {!d.enabled && <span class="badge muted">disabled</span>}
              </th>
              <td>{formatCount(d.status.queued)}</td>
              <td>
                {formatCount(d.status.inFlight)}
                {d.status.attempts > 0 && <span class="muted"> attempt {d.status.attempts + 1}{d.status.retryAt ? ` at ${formatTime(d.status.retryAt)}` : ''}</span>}
              </td>
              <td>{formatCount(d.status.delivered)}</td>
              <td class={d.status.deadLettered > 0 ? 'warn' : undefined}>{formatCount(d.status.deadLettered)}</td>
              <td>{formatDuration(d.status.lagMs)}</td>
              <td>{formatTime(d.status.lastDeliveredAt)}</td>
              <td class="wrap">{d.status.lastError ? `${d.status.lastError.kind}: ${d.status.lastError.message} (${formatTime(d.status.lastError.at)})` : '—'}</td>
              <td class="wrap">{d.status.paused ?? 'no'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function DeadLetters({ trackerId, destination: d, onChanged }: { trackerId: string; destination: DestinationView; onChanged: () => Promise<void> }) {
  const [entries, setEntries] = useState<{ total: number; entries: DeadLetter[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const count = d.status.deadLettered;

  const load = async () => {
    try {
      setEntries(await api.destinations.deadLetters(trackerId, d.id));
      setError(null);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  // The list follows the count the health poll reports, without polling the entries themselves.
  useEffect(() => {
    void load();
  }, [trackerId, d.id, count]);

  const act = async (action: 'replay' | 'discard', ids?: string[]) => {
    setError(null);
    try {
      if (action === 'replay') {
        const r = await api.destinations.replay(trackerId, d.id, ids);
        setStatus(`${r.replayed} record${r.replayed === 1 ? '' : 's'} sent back for delivery.${r.destinationEnabled ? '' : ` ${d.id} is disabled: they wait until it is enabled.`}`);
      } else {
        const r = await api.destinations.discard(trackerId, d.id, ids);
        setStatus(`${r.discarded} dead letter${r.discarded === 1 ? '' : 's'} discarded.`);
      }
      await Promise.all([load(), onChanged()]);
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const headingId = `dead-letters-${d.id}`;
  return (
    <section class="card" aria-labelledby={headingId}>
      <h2 id={headingId}>
        Dead letters of {d.id} <span class="muted">({formatCount(entries?.total ?? count)})</span>
      </h2>
      <Alert message={error} />
      <Status message={status} />
      {entries && entries.entries.length === 0 && <p class="empty">None: every record reached {d.id} or is still on its way.</p>}
      {entries && entries.entries.length > 0 && (
        <>
          <div class="actions">
            <button type="button" class="button small" onClick={() => act('replay')}>
              Replay all
            </button>
            <ConfirmButton label="Discard all" confirmLabel={`Discard all ${entries.total} for good`} onConfirm={() => act('discard')} />
          </div>
          {entries.total > entries.entries.length && (
            <p class="hint">
              Showing the oldest {entries.entries.length} of {entries.total}.
            </p>
          )}
          <ul class="entries">
            {entries.entries.map((e) => (
              <li key={e.entryId} class="entry">
                <details>
                  <summary>
                    <span class="mono">{formatTime(e.failedAt)}</span> <span class="badge warn">{e.error.kind}</span> {e.record.kind} {e.record.event ?? e.record.uid ?? e.record.sid ?? ''} — {e.error.message}
                  </summary>
                  <pre class="json">{json(e.record)}</pre>
                </details>
                <div class="row-actions">
                  <button type="button" class="button small" aria-label={`Replay dead letter ${e.entryId}`} onClick={() => act('replay', [e.entryId])}>
                    Replay
                  </button>
                  <ConfirmButton label="Discard" ariaLabel={`Discard dead letter ${e.entryId}`} confirmLabel="Discard for good" onConfirm={() => act('discard', [e.entryId])} />
                </div>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
