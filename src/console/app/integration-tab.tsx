import { api } from './api.js';
import { Alert, CopyField, Spinner } from './components.js';
import { useLoad } from './hooks.js';
import type { EndpointView, IntegrationView, Tracker } from './types.js';
import { WebhookBuilder } from './webhook-builder.js';

/** Every way to send data to this tracker, with its token filled in, ready to copy. */
export function IntegrationTab({ tracker }: { tracker: Tracker }) {
  const rulesKey = tracker.privacyRules.map((r) => `${r.property}=${r.action}`).join('&');
  const view = useLoad(() => api.trackers.integration(tracker.id), `${tracker.id}:${tracker.tokens.length}:${rulesKey}`);
  if (!view.data) return view.error ? <Alert message={view.error} /> : <Spinner />;
  const v = view.data;
  const event = v.endpoints.find((e) => e.kind === 'event');
  return (
    <>
      <section class="card" aria-labelledby="connection-heading">
        <h2 id="connection-heading">Connection</h2>
        <p class="hint">
          These examples use the oldest active token. A request carries it in the <code>Authorization</code> header, as <code>_token</code> in a JSON body, or as <code>_token</code> in the query string.
        </p>
        <dl class="copy-list">
          <dt>Base URL</dt>
          <dd>
            <CopyField value={v.baseUrl} label="Copy base URL" />
          </dd>
          <dt>Token</dt>
          <dd>
            <CopyField value={v.token} label="Copy token" />
          </dd>
          <dt>Authorization header</dt>
          <dd>
            <CopyField value={`Authorization: ${v.authorizationHeader}`} label="Copy Authorization header" />
          </dd>
        </dl>
      </section>
      <Website view={v} />
      {v.endpoints.map((e) => (
        <Endpoint key={e.kind} endpoint={e} view={v} />
      ))}
      {event && <Snippets event={event} view={v} />}
      <SegmentSdks view={v} />
      <PersonalData view={v} />
      <WebhookBuilder baseUrl={v.baseUrl} token={v.token} />
    </>
  );
}

function Endpoint({ endpoint: e, view }: { endpoint: EndpointView; view: IntegrationView }) {
  const headingId = `endpoint-${e.kind}`;
  const body = JSON.stringify({ _token: view.token, ...e.sample });
  const rows: Array<[string, string, string, string]> = [
    ['POST (token in the header or the body)', e.postUrl, `Copy POST URL for ${e.kind}`, 'post'],
    ['JSON body with the token', body, `Copy JSON body with token for ${e.kind}`, 'body'],
    ['GET, one parameter per field (token in the query)', e.getUrl, `Copy GET URL for ${e.kind}`, 'get'],
    ['GET, base64 JSON in data=', e.dataUrl, `Copy data= URL for ${e.kind}`, 'data'],
    ['Pixel (1×1 GIF)', e.pixelUrl, `Copy pixel URL for ${e.kind}`, 'pixel'],
    ['Script (empty JavaScript)', e.scriptUrl, `Copy script URL for ${e.kind}`, 'script'],
  ];
  const curl = view.curl.filter((c) => c.kind === e.kind);
  return (
    <section class="card" aria-labelledby={headingId}>
      <h2 id={headingId}>
        <code>/v3/{e.kind}</code> <span class="muted">{e.kind === 'event' ? 'append an event' : `create or update a ${e.kind}`}</span>
      </h2>
      <dl class="copy-list">
        {rows.map(([title, value, label, testId]) => (
          <div key={testId} class="copy-item" data-testid={`${e.kind}-${testId}`}>
            <dt>{title}</dt>
            <dd>
              <CopyField value={value} label={label} />
            </dd>
          </div>
        ))}
      </dl>
      <details class="curl">
        <summary>curl examples for /v3/{e.kind}</summary>
        <dl class="copy-list">
          {curl.map((c) => (
            <div key={c.form} class="copy-item">
              <dt>{c.title}</dt>
              <dd>
                <CopyField value={c.command} label={`Copy curl: ${c.title} (${e.kind})`} multiline />
              </dd>
            </div>
          ))}
        </dl>
      </details>
    </section>
  );
}

function Snippets({ event, view }: { event: EndpointView; view: IntegrationView }) {
  const beacon = `navigator.sendBeacon('${event.postUrl}', JSON.stringify({ _token: '${view.token}', _event: 'page_view', page: location.pathname }));`;
  const script = `<script src="${event.scriptUrl.replace(/&/g, '&amp;')}" async></script>`;
  return (
    <section class="card" aria-labelledby="snippets-heading">
      <h2 id="snippets-heading">Web page snippets</h2>
      <dl class="copy-list">
        <dt>
          <code>&lt;img&gt;</code> pixel (pages and e-mails)
        </dt>
        <dd>
          <CopyField value={view.pixelSnippet} label="Copy img pixel snippet" multiline />
        </dd>
        <dt>
          <code>&lt;script&gt;</code> tag
        </dt>
        <dd>
          <CopyField value={script} label="Copy script tag snippet" multiline />
        </dd>
        <dt>
          <code>navigator.sendBeacon</code> (survives page unload; sent as text/plain, so no CORS preflight)
        </dt>
        <dd>
          <CopyField value={beacon} label="Copy sendBeacon snippet" multiline />
        </dd>
      </dl>
    </section>
  );
}

/** The browser SDK: the one snippet a website needs (docs/websites.md). */
function Website({ view }: { view: IntegrationView }) {
  return (
    <section class="card" aria-labelledby="website-heading">
      <h2 id="website-heading">Website</h2>
      <p>
        Paste this before <code>&lt;/head&gt;</code> on every page: it records page views (also in single-page apps), sessions with their landing page, referrer and UTM
        parameters, and an anonymous visitor id. Then call <code>tributary.track('signup', {'{'} plan: 'pro' {'}'})</code> and <code>tributary.identify('user-42', {'{'} email {'}'})</code>{' '}
        from your code; nothing is lost offline or when the visitor leaves.
      </p>
      <CopyField value={view.sdkSnippet} label="Copy website snippet" multiline />
      {view.sdkPinnedSnippet && (
        <details>
          <summary>Pinned to this version, with Subresource Integrity</summary>
          <p>This tag never changes under you: update it yourself when the relay is upgraded.</p>
          <CopyField value={view.sdkPinnedSnippet} label="Copy pinned website snippet" multiline />
        </details>
      )}
    </section>
  );
}

/** Segment's and RudderStack's SDKs, pointed at /v1 with the token as their write key (docs/segment.md). */
function SegmentSdks({ view }: { view: IntegrationView }) {
  const s = view.segment;
  return (
    <section class="card" aria-labelledby="segment-heading">
      <h2 id="segment-heading">Segment / RudderStack SDKs</h2>
      <p class="hint">
        An app already using Segment’s or RudderStack’s SDKs sends here once pointed at <code>{s.endpoint}</code>, with the token as its write key.
      </p>
      <details class="curl">
        <summary>Settings for each SDK</summary>
        <dl class="copy-list">
          {s.snippets.map((x) => (
            <div key={x.sdk} class="copy-item" data-testid={`segment-${x.sdk}`}>
              <dt>{x.title}</dt>
              <dd>
                {x.note && <p class="hint">{x.note}</p>}
                <CopyField value={x.code} label={`Copy ${x.title}`} multiline />
              </dd>
            </div>
          ))}
        </dl>
      </details>
    </section>
  );
}

/** What a client's developer must know: which values are changed before storage, and how. */
function PersonalData({ view }: { view: IntegrationView }) {
  return (
    <section class="card" aria-labelledby="personal-data-heading">
      <h2 id="personal-data-heading">Personal data</h2>
      {view.privacyRules.length === 0 ? (
        <p class="hint">No rules: every property is stored as sent. Add rules in Settings → Personal data.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Property</th>
                <th scope="col">Action</th>
                <th scope="col">What is stored</th>
              </tr>
            </thead>
            <tbody>
              {view.privacyRules.map((r) => (
                <tr key={r.property}>
                  <td>
                    <code>{r.property}</code>
                  </td>
                  <td>{r.action}</td>
                  <td>{r.effect}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
