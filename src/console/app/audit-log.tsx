import { useEffect, useRef, useState } from 'preact/hooks';
import type { AuditEntry, AuditFieldChange, AuditQuery } from './access-types.js';
import { messageOf } from './api.js';
import { Alert, Field, Spinner } from './components.js';
import { formatTime } from './format.js';
import type { Tracker } from './types.js';

const PAGE = 50;
const OUTCOMES = ['ok', 'refused', 'failed'] as const;
const OUTCOME_TONE: Record<AuditEntry['outcome'], string> = { ok: 'ok', refused: 'warn', failed: 'error' };

interface Filter {
  tracker: string;
  actor: string;
  outcome: string;
}

/** A changed value as an auditor reads it: text as it is, anything else as JSON, an absent side as such. */
function valueText(v: unknown, present: boolean): string {
  if (!present) return '(none)';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function FieldLine({ f }: { f: AuditFieldChange }) {
  return (
    <li>
      <code>{f.path}</code>: <span class="before">{valueText(f.before, 'before' in f)}</span> → <span class="after">{valueText(f.after, 'after' in f)}</span>
    </li>
  );
}

function Entry({ e }: { e: AuditEntry }) {
  const target = Object.entries(e.target).map(([kind, id]) => `${kind} ${id}`).join(', ');
  return (
    <li class="audit-entry" data-testid="audit-entry" data-outcome={e.outcome}>
      <p class="audit-head">
        <span class="mono">{formatTime(e.at)}</span> <span class={`badge ${OUTCOME_TONE[e.outcome]}`}>{e.status ? `${e.outcome} ${e.status}` : e.outcome}</span> <strong>{e.actor.label}</strong> <code>{e.action}</code>
        {target && <span> on {target}</span>}
        {e.from && <span class="muted"> from {e.from}</span>}
      </p>
      {e.reason && <p class="error-text">{e.reason}</p>}
      {e.suppressed ? <p class="hint">{e.suppressed} refusals from the same address were left out before this one.</p> : null}
      {e.changes.map((c) => (
        <div key={c.object} class="audit-change">
          <p class="muted">{c.object}</p>
          <ul>
            {c.fields.map((f) => (
              <FieldLine key={f.path} f={f} />
            ))}
          </ul>
        </div>
      ))}
    </li>
  );
}

/**
 * Audit entries, newest first, filtered by the server (actor, outcome and, given `trackers`, the
 * tracker), with older ones a page at a time.
 */
export function AuditLog({ load, trackers, listKey }: { load: (q: AuditQuery) => Promise<AuditEntry[]>; trackers?: Tracker[]; listKey: string }) {
  const [draft, setDraft] = useState<Filter>({ tracker: '', actor: '', outcome: '' });
  const [filter, setFilter] = useState<Filter>(draft);
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const generation = useRef(0);

  const fetchPage = async (before?: string) => {
    const mine = ++generation.current;
    setBusy(true);
    try {
      const page = await load({ limit: PAGE, ...(before ? { before } : {}), ...(filter.tracker ? { tracker: filter.tracker } : {}), ...(filter.actor.trim() ? { actor: filter.actor.trim() } : {}), ...(filter.outcome ? { outcome: filter.outcome as AuditEntry['outcome'] } : {}) });
      if (mine !== generation.current) return;
      setEntries((prev) => (before ? [...(prev ?? []), ...page] : page));
      setMore(page.length === PAGE);
      setError(null);
    } catch (err) {
      if (mine === generation.current) setError(messageOf(err));
    } finally {
      if (mine === generation.current) setBusy(false);
    }
  };
  useEffect(() => {
    void fetchPage();
  }, [listKey, filter]);

  const apply = (e: Event) => {
    e.preventDefault();
    // The entries of the last filter must not pass for this one's while it loads.
    setEntries(null);
    setFilter({ ...draft });
  };
  const last = entries?.[entries.length - 1];

  return (
    <>
      <form onSubmit={apply} noValidate aria-label="Filter the audit log" class="filters">
        <div class="field-row">
          {trackers && (
            <Field label="Tracker">
              {(p) => (
                <select {...p} value={draft.tracker} onChange={(e) => setDraft({ ...draft, tracker: e.currentTarget.value })}>
                  <option value="">Any</option>
                  {trackers.map((t) => (
                    <option key={t.id} value={t.id}>
                      {t.name} ({t.id})
                    </option>
                  ))}
                </select>
              )}
            </Field>
          )}
          <Field label="Actor" hint="An e-mail (or part of one), a token’s id, “break-glass”.">
            {(p) => <input {...p} type="text" spellcheck={false} autoCapitalize="off" value={draft.actor} onInput={(e) => setDraft({ ...draft, actor: e.currentTarget.value })} />}
          </Field>
          <Field label="Outcome">
            {(p) => (
              <select {...p} value={draft.outcome} onChange={(e) => setDraft({ ...draft, outcome: e.currentTarget.value })}>
                <option value="">Any</option>
                {OUTCOMES.map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <button class="button" type="submit">
          Show
        </button>
      </form>
      <Alert message={error} />
      {!entries ? (
        busy && <Spinner />
      ) : entries.length === 0 ? (
        <p class="empty">No entry matches.</p>
      ) : (
        <ul class="entries" aria-label="Audit entries">
          {entries.map((e) => (
            <Entry key={e.id} e={e} />
          ))}
        </ul>
      )}
      {more && last && (
        <div class="actions">
          <button type="button" class="button" disabled={busy} onClick={() => void fetchPage(last.id)}>
            {busy ? 'Loading…' : 'Older entries'}
          </button>
        </div>
      )}
    </>
  );
}
