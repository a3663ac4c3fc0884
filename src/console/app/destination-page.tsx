import { useCanEdit } from './access.js';
import { api } from './api.js';
import { Alert, Spinner } from './components.js';
import { destinationHealth } from './destinations-tab.js';
import { formatCount, formatDuration, formatTime } from './format.js';
import { useLoad } from './hooks.js';
import { href } from './router.js';
import { hourlyRows } from './series.js';
import { RulesEditor } from './rules-editor.js';
import { BackfillCard } from './backfill-card.js';
import { TimeChart, type ChartMarker, type Tone } from './time-chart.js';
import type { DeliveryMarker, DestinationPicture } from './types.js';

const REFRESH_MS = 15_000;

const MARKER_TONE: Record<DeliveryMarker['state'], Tone> = { delivering: 'ok', failing: 'error', paused: 'warn', disabled: 'muted' };

/** What a change of state means to the owner. */
export function markerLabel(m: DeliveryMarker): string {
  switch (m.state) {
    case 'delivering':
      return m.from === 'failing' ? 'Recovered' : m.from === 'paused' ? 'Resumed' : m.from === 'disabled' ? 'Enabled' : 'Started delivering';
    case 'failing':
      return 'Failing';
    case 'paused':
      return 'Paused';
    case 'disabled':
      return 'Disabled: delivery paused';
  }
}

/** Axis ticks of a lag: short. */
function shortDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(ms < 36_000_000 ? 1 : 0)} h`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${formatCount(n)} ${n === 1 ? one : many}`;

/** One destination over the last 24 hours: what it delivered, what it refused, its backlog and lag, and the moments its state changed. */
export function DestinationPage({ trackerId, destinationId }: { trackerId: string; destinationId: string }) {
  // The rules' preview runs them over the tracker's records: an editor's view, as is starting a backfill.
  const editor = useCanEdit(trackerId);
  const list = useLoad(() => api.destinations.list(trackerId), `${trackerId}/${destinationId}`, REFRESH_MS);
  const picture = useLoad(() => api.destinations.traffic(trackerId, destinationId), `${trackerId}/${destinationId}`, REFRESH_MS);
  const d = list.data?.find((x) => x.id === destinationId);
  const health = d && destinationHealth(d);
  return (
    <>
      <p class="breadcrumb">
        <a href={href({ page: 'tracker', trackerId, tab: 'destinations' })}>Destinations</a> <span aria-hidden="true">/</span>
      </p>
      <section class="card" aria-labelledby="destination-page-heading" data-testid="destination-page">
        <div class="destination-head">
          <h2 id="destination-page-heading">
            {destinationId} {d && <span class="muted">{d.type}</span>}
          </h2>
          {health && <span class={`badge ${health.tone}`}>{health.label}</span>}
        </div>
        <Alert message={list.error ?? picture.error} />
        {d && (
          <dl class="stats">
            <div>
              <dt>Queued now</dt>
              <dd>{formatCount(d.status.queued)}</dd>
            </div>
            <div>
              <dt>Lag now</dt>
              <dd>{formatDuration(d.status.lagMs)}</dd>
            </div>
            <div>
              <dt>Delivered, all time</dt>
              <dd>{formatCount(d.status.delivered)}</dd>
            </div>
            <div>
              <dt>Dead letters</dt>
              <dd>{formatCount(d.status.deadLettered)}</dd>
            </div>
          </dl>
        )}
        {list.data && !d && <p class="empty">No destination {destinationId} on this tracker.</p>}
        <p class="hint">The last 24 hours, a point a minute, refreshed every 15 seconds. Dashed lines mark the moments its state changed (listed below). Drag across a chart to zoom in, double-click to see the whole day.</p>
      </section>
      {d && editor && <RulesEditor key={d.id} trackerId={trackerId} destination={d} onSaved={() => void list.reload()} />}
      {d && (editor || d.backfill) && <BackfillCard trackerId={trackerId} destination={d} onChanged={() => void list.reload()} editor={editor} />}
      {!picture.data ? picture.loading && <Spinner /> : <Charts picture={picture.data} destinationId={destinationId} />}
    </>
  );
}

function Charts({ picture: p, destinationId }: { picture: DestinationPicture; destinationId: string }) {
  const start = Date.parse(p.start);
  const markers: ChartMarker[] = p.markers.map((m) => ({ at: Date.parse(m.at), tone: MARKER_TONE[m.state] }));
  const inWindow = p.markers.filter((m) => Date.parse(m.at) >= start);
  const moments = inWindow.length === 0 ? 'no change of state' : `${plural(inWindow.length, 'change')} of state, the last: ${markerLabel(inWindow[0]!).toLowerCase()} at ${formatTime(inWindow[0]!.at)}`;
  const sampled = p.backlog.filter((b): b is number => b !== null);
  const lags = p.lagMs.filter((l): l is number => l !== null);
  const ruled = p.totals.skipped + p.totals.filterErrors > 0;
  const kept = ruled ? `; its rules kept ${plural(p.totals.skipped, 'record')} from it, and its filter failed on ${plural(p.totals.filterErrors, 'record')}` : '';
  const deliveredSummary = `In the last 24 hours ${destinationId} took ${plural(p.totals.delivered, 'record')} and refused ${plural(p.totals.deadLettered, 'record')} for good (dead letters)${kept}; ${moments}.`;
  const backlogSummary =
    sampled.length === 0
      ? 'No sample of the backlog in the last 24 hours: no worker held this destination.'
      : `Backlog in the last 24 hours: at most ${plural(Math.max(...sampled), 'record')}, ${plural(sampled[sampled.length - 1]!, 'record')} at the last sample; lag at most ${formatDuration(Math.max(...lags))}.`;
  const rows = hourlyRows(start, p.stepSeconds, { delivered: p.delivered, deadLettered: p.deadLettered, backlog: p.backlog, lagMs: p.lagMs }, { backlog: 'max', lagMs: 'max' });
  return (
    <>
      <section class="card" aria-labelledby="delivered-heading">
        <h2 id="delivered-heading">Delivered per minute</h2>
        <TimeChart
          title="Records delivered and dead-lettered per minute"
          summary={deliveredSummary}
          start={start}
          stepSeconds={p.stepSeconds}
          markers={markers}
          testId="delivered-chart"
          data={{ delivered: p.totals.delivered, 'dead-lettered': p.totals.deadLettered, skipped: p.totals.skipped, 'filter-errors': p.totals.filterErrors, markers: inWindow.map((m) => m.state).join(' ') }}
          leftLabel="records a minute"
          series={[
            { label: 'Delivered', values: p.delivered, tone: 'ok', fill: true },
            { label: 'Dead-lettered', values: p.deadLettered, tone: 'error', fill: true },
            ...(ruled
              ? [
                  { label: 'Skipped by its rules', values: p.skipped, tone: 'muted' as const },
                  { label: 'Filter failed', values: p.filterErrors, tone: 'warn' as const },
                ]
              : []),
          ]}
        />
        <p class="hint">{deliveredSummary}</p>
      </section>
      <section class="card" aria-labelledby="backlog-heading">
        <h2 id="backlog-heading">Backlog and lag</h2>
        <TimeChart
          title="Records waiting (left) and the age of the oldest (right), sampled each minute"
          summary={backlogSummary}
          start={start}
          stepSeconds={p.stepSeconds}
          markers={markers}
          testId="backlog-chart"
          data={{ samples: sampled.length, 'last-backlog': sampled[sampled.length - 1] ?? '' }}
          leftLabel="records"
          rightLabel="lag"
          series={[
            { label: 'Backlog', values: p.backlog, tone: 'accent', fill: true },
            { label: 'Lag', values: p.lagMs, tone: 'warn', right: true, format: shortDuration },
          ]}
        />
        <p class="hint">{backlogSummary}</p>
      </section>
      <section class="card" aria-labelledby="moments-heading">
        <h2 id="moments-heading">Changes of state</h2>
        {p.markers.length === 0 ? (
          <p class="empty">None kept yet.</p>
        ) : (
          <div class="table-wrap">
            <table data-testid="markers-table">
              <caption class="visually-hidden">The last {p.markers.length} changes of state, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">What</th>
                  <th scope="col">Why</th>
                </tr>
              </thead>
              <tbody>
                {p.markers.map((m) => (
                  <tr key={`${m.at} ${m.state} ${m.partition ?? ''}`} data-state={m.state}>
                    <td class="mono">{formatTime(m.at)}</td>
                    <th scope="row">
                      <span class={`marker-swatch ${MARKER_TONE[m.state]}`} aria-hidden="true" /> {markerLabel(m)}
                      {m.partition !== undefined && <span class="muted"> (partition {m.partition})</span>}
                    </th>
                    <td class="wrap">{m.message ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <p class="hint">Each change is kept once, when it happens (a destination retried for an hour is one “Failing”); the last 100 are kept.</p>
      </section>
      <section class="card" aria-labelledby="hourly-heading">
        <details class="chart-table">
          <summary id="hourly-heading">The same as a table, by hour</summary>
          {rows.length === 0 ? (
            <p class="empty">Nothing delivered or sampled in the last 24 hours.</p>
          ) : (
            <div class="table-wrap">
              <table class="numbers" data-testid="destination-hourly-table">
                <caption class="visually-hidden">Per hour, newest first: records delivered and dead-lettered, the largest backlog and lag sampled</caption>
                <thead>
                  <tr>
                    <th scope="col">Hour</th>
                    <th scope="col">Delivered</th>
                    <th scope="col">Dead-lettered</th>
                    <th scope="col">Backlog at most</th>
                    <th scope="col">Lag at most</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((r) => (
                    <tr key={r.hour}>
                      <th scope="row">{r.label}</th>
                      <td>{formatCount(r.values.delivered)}</td>
                      <td class={r.values.deadLettered > 0 ? 'warn' : undefined}>{formatCount(r.values.deadLettered)}</td>
                      <td>{r.missing.has('backlog') ? '—' : formatCount(r.values.backlog)}</td>
                      <td>{r.missing.has('lagMs') ? '—' : formatDuration(r.values.lagMs)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </details>
      </section>
    </>
  );
}
