import { useState } from 'preact/hooks';
import { api } from './api.js';
import { Alert, Field, Spinner } from './components.js';
import { formatCount } from './format.js';
import { useLoad } from './hooks.js';
import { hourlyRows, minuteWith, sumSeries } from './series.js';
import { TimeChart } from './time-chart.js';
import type { TrafficPicture, TrafficSeries } from './types.js';

/** The counts reach Redis every few seconds (TRAFFIC_FLUSH_MS); a poll every 15 s is enough for a picture of 24 hours. */
const REFRESH_MS = 15_000;

const isRefusal = (s: TrafficSeries) => s.outcome !== 'accepted' && s.outcome !== 'duplicate';

const plural = (n: number, one: string, many = `${one}s`) => `${formatCount(n)} ${n === 1 ? one : many}`;

/** A tracker's records per minute over the last 24 hours: accepted, duplicates and refused, by endpoint and error code. */
export function TrafficTab({ trackerId }: { trackerId: string }) {
  const picture = useLoad(() => api.trackers.traffic(trackerId), trackerId, REFRESH_MS);
  const [endpoint, setEndpoint] = useState('');
  const p = picture.data;
  return (
    <>
      <section class="card" aria-labelledby="traffic-heading">
        <h2 id="traffic-heading">Records per minute, last 24 hours</h2>
        <p class="hint">Counted by every API process and sent every few seconds; refreshed every 15 seconds. Drag across the chart to zoom in, double-click to see the whole day.</p>
        <Alert message={picture.error} />
        {!p ? picture.loading && <Spinner /> : <TrafficChart picture={p} endpoint={endpoint} onEndpoint={setEndpoint} />}
      </section>
      {p && <Refusals picture={p} />}
    </>
  );
}

function TrafficChart({ picture: p, endpoint, onEndpoint }: { picture: TrafficPicture; endpoint: string; onEndpoint: (e: string) => void }) {
  const endpoints = [...new Set(p.series.map((s) => s.endpoint))].sort();
  const shown = endpoint === '' ? p.series : p.series.filter((s) => s.endpoint === endpoint);
  const accepted = sumSeries(shown.filter((s) => s.outcome === 'accepted'), p.series[0]?.counts.length ?? 1440);
  const duplicates = sumSeries(shown.filter((s) => s.outcome === 'duplicate'), accepted.length);
  const refused = sumSeries(shown.filter(isRefusal), accepted.length);
  const totals = { accepted: accepted.reduce((a, b) => a + b, 0), duplicate: duplicates.reduce((a, b) => a + b, 0), refused: refused.reduce((a, b) => a + b, 0) };
  const start = Date.parse(p.start);
  const where = endpoint === '' ? '' : ` at ${endpoint}`;
  const summary =
    totals.accepted + totals.duplicate + totals.refused === 0
      ? `No records in the last 24 hours${where}.`
      : `In the last 24 hours${where}: ${plural(totals.accepted, 'record')} accepted, ${plural(totals.duplicate, 'duplicate')}, ${plural(totals.refused, 'record')} refused.`;
  const rows = hourlyRows(start, p.stepSeconds, { accepted, duplicates, refused });
  return (
    <>
      <p data-testid="traffic-summary">{summary}</p>
      {endpoints.length > 1 && (
        <Field label="Endpoint">
          {(control) => (
            <select {...control} value={endpoint} onChange={(e) => onEndpoint((e.target as HTMLSelectElement).value)}>
              <option value="">All endpoints</option>
              {endpoints.map((e) => (
                <option key={e} value={e}>
                  {e}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
      <TimeChart
        title={`Records per minute${where}`}
        summary={summary}
        start={start}
        stepSeconds={p.stepSeconds}
        testId="traffic-chart"
        data={{ accepted: totals.accepted, duplicate: totals.duplicate, refused: totals.refused, points: accepted.length }}
        leftLabel="records a minute"
        series={[
          { label: 'Accepted', values: accepted, tone: 'ok', fill: true },
          { label: 'Duplicates', values: duplicates, tone: 'muted' },
          { label: 'Refused', values: refused, tone: 'error', fill: true },
        ]}
      />
      <details class="chart-table">
        <summary>The same as a table, by hour</summary>
        {rows.length === 0 ? (
          <p class="empty">No records in the last 24 hours.</p>
        ) : (
          <div class="table-wrap">
            <table class="numbers" data-testid="traffic-table">
              <caption class="visually-hidden">Records per hour{where}, newest first; hours without records are left out</caption>
              <thead>
                <tr>
                  <th scope="col">Hour</th>
                  <th scope="col">Accepted</th>
                  <th scope="col">Duplicates</th>
                  <th scope="col">Refused</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.hour}>
                    <th scope="row">{r.label}</th>
                    <td>{formatCount(r.values.accepted)}</td>
                    <td>{formatCount(r.values.duplicates)}</td>
                    <td class={r.values.refused > 0 ? 'warn' : undefined}>{formatCount(r.values.refused)}</td>
                  </tr>
                ))}
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row">24 hours</th>
                  <td data-testid="traffic-total-accepted">{formatCount(totals.accepted)}</td>
                  <td>{formatCount(totals.duplicate)}</td>
                  <td data-testid="traffic-total-refused">{formatCount(totals.refused)}</td>
                </tr>
              </tfoot>
            </table>
          </div>
        )}
      </details>
    </>
  );
}

/** Every refusal of the window by code and endpoint: what a client gets wrong, and since when. */
function Refusals({ picture: p }: { picture: TrafficPicture }) {
  const refusals = p.series.filter(isRefusal);
  const start = Date.parse(p.start);
  return (
    <section class="card" aria-labelledby="refusals-heading">
      <h2 id="refusals-heading">Refused, by error code</h2>
      {refusals.length === 0 ? (
        <p class="empty">No record was refused in the last 24 hours.</p>
      ) : (
        <div class="table-wrap">
          <table class="numbers" data-testid="refusals-table">
            <thead>
              <tr>
                <th scope="col">Error code</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Records, 24 h</th>
                <th scope="col">First</th>
                <th scope="col">Last</th>
              </tr>
            </thead>
            <tbody>
              {refusals.map((s) => (
                <tr key={`${s.endpoint} ${s.outcome}`}>
                  <th scope="row">
                    <code>{s.outcome}</code>
                  </th>
                  <td>
                    <code>{s.endpoint}</code>
                  </td>
                  <td>{formatCount(s.total)}</td>
                  <td>{minuteWith(s.counts, start, p.stepSeconds, 'first')}</td>
                  <td>{minuteWith(s.counts, start, p.stepSeconds, 'last')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="hint">The History tab has the requests themselves, with their messages.</p>
    </section>
  );
}
