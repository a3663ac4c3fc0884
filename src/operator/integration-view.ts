import { RECORD_KINDS, type RecordKind } from '../core/records/types';
import type { PrivacyAction } from '../core/trackers/privacy-rules';
import { builtSdkManifest } from '../core/sdk-manifest';
import type { Tracker } from '../core/trackers/types';
import { SDK_METHODS } from '../sdk/methods';
import { buildSegmentView, renderSegmentViewText, type SegmentView } from './segment-snippets';

export type ExampleForm = 'post-json' | 'post-json-token' | 'post-gzip' | 'get-params' | 'get-data' | 'pixel';

export interface EndpointView {
  kind: RecordKind;
  /** POST target for a JSON body; the token goes in `Authorization: Tracker <token>` or in `_token`. */
  postUrl: string;
  /** GET with `_token` and one URL parameter per field of the sample. */
  getUrl: string;
  /** GET with `_token` and the sample as URL-safe base64 JSON in `data=`. */
  dataUrl: string;
  /** `/tracker.gif` with the same parameters: a 1×1 GIF for `<img>` tags and e-mails. */
  pixelUrl: string;
  /** `/tracker.js` with the same parameters: an empty script for `<script>` tags. */
  scriptUrl: string;
  /** The record every example of this endpoint sends. */
  sample: Readonly<Record<string, string>>;
}

export interface CurlExample {
  kind: RecordKind;
  form: ExampleForm;
  title: string;
  /** One line for a POSIX shell; every argument is single-quoted. */
  command: string;
}

/** A personal-data rule as a client's developer needs to know it: what happens to the value they send. */
export interface PrivacyRuleView {
  property: string;
  action: PrivacyAction;
  effect: string;
}

export interface IntegrationView {
  trackerId: string;
  trackerName: string;
  baseUrl: string;
  token: string;
  authorizationHeader: string;
  endpoints: EndpointView[];
  /** Every form for every endpoint. */
  curl: CurlExample[];
  pixelSnippet: string;
  /** The browser SDK's tag (docs/websites.md) with the stub that queues calls made before it loads. */
  sdkSnippet: string;
  /** The same, pinned to the built version with its Subresource Integrity; absent when the SDK is not built. */
  sdkPinnedSnippet?: string;
  /** Segment's and RudderStack's SDKs pointed at `/v1`, the token as their write key. */
  segment: SegmentView;
  /** What the tracker does to personal data before storing it; empty: everything is stored as sent. */
  privacyRules: PrivacyRuleView[];
}

const SAMPLES: Readonly<Record<RecordKind, Readonly<Record<string, string>>>> = {
  user: { _uid: 'user-42', email: 'ada@example.com', plan: 'pro' },
  session: { _sid: 'sess-7f3a9c', _uid: 'user-42', source: 'newsletter' },
  event: { _event: 'signup', _uid: 'user-42', _sid: 'sess-7f3a9c', plan: 'pro' },
};

const FORM_TITLES: Readonly<Record<ExampleForm, string>> = {
  'post-json': 'POST JSON, token in the Authorization header',
  'post-json-token': 'POST JSON, token as _token in the body',
  'post-gzip': 'POST gzip-compressed JSON',
  'get-params': 'GET, one URL parameter per field',
  'get-data': 'GET, record as base64 JSON in data=',
  pixel: 'GET the 1x1 pixel',
};

export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Defines `window.tributary` with each method queuing its call in `q`, so a page may call
 * `tributary.track(…)` before the script (async) has loaded; the SDK replays the queue in order.
 */
export const SDK_STUB = `<script>!function(w,t){t=w.tributary=w.tributary||{q:[]};"${SDK_METHODS.join(' ')}".split(" ").forEach(function(m){t[m]=t[m]||function(){t.q.push([m,arguments])}})}(window)</script>`;

function sdkSnippets(baseUrl: string, token: string): Pick<IntegrationView, 'sdkSnippet' | 'sdkPinnedSnippet'> {
  const tag = (src: string, extra = '') => `${SDK_STUB}\n<script async src="${escapeHtml(src)}"${extra} data-token="${escapeHtml(token)}"></script>`;
  const manifest = builtSdkManifest();
  return {
    sdkSnippet: tag(`${baseUrl}/sdk.js`),
    ...(manifest && { sdkPinnedSnippet: tag(`${baseUrl}/sdk.${manifest.hash}.js`, ` integrity="${manifest.integrity}" crossorigin="anonymous"`) }),
  };
}

function withQuery(url: string, params: Record<string, string>): string {
  return `${url}?${new URLSearchParams(params).toString()}`;
}

function endpointView(baseUrl: string, token: string, kind: RecordKind): EndpointView {
  const sample = SAMPLES[kind];
  const postUrl = `${baseUrl}/v3/${kind}`;
  const params = { _token: token, ...sample };
  // URL-safe base64 needs no percent-encoding in a query string; the edge accepts both alphabets.
  const data = Buffer.from(JSON.stringify(sample)).toString('base64url');
  return {
    kind,
    postUrl,
    getUrl: withQuery(postUrl, params),
    dataUrl: withQuery(postUrl, { _token: token, data }),
    pixelUrl: withQuery(`${postUrl}/tracker.gif`, params),
    scriptUrl: withQuery(`${postUrl}/tracker.js`, params),
    sample,
  };
}

function curlExamples(e: EndpointView, token: string): CurlExample[] {
  const auth = `-H ${shellQuote(`Authorization: Tracker ${token}`)}`;
  const json = `-H 'Content-Type: application/json'`;
  const body = shellQuote(JSON.stringify(e.sample));
  const commands: Record<ExampleForm, string> = {
    'post-json': `curl -sS ${shellQuote(e.postUrl)} ${auth} ${json} -d ${body}`,
    'post-json-token': `curl -sS ${shellQuote(e.postUrl)} ${json} -d ${shellQuote(JSON.stringify({ _token: token, ...e.sample }))}`,
    'post-gzip': `printf '%s' ${body} | gzip -c | curl -sS ${shellQuote(e.postUrl)} ${auth} ${json} -H 'Content-Encoding: gzip' --data-binary @-`,
    'get-params': `curl -sS ${shellQuote(e.getUrl)}`,
    'get-data': `curl -sS ${shellQuote(e.dataUrl)}`,
    pixel: `curl -sS -o /dev/null -w '%{http_code} %{content_type}\\n' ${shellQuote(e.pixelUrl)}`,
  };
  return (Object.keys(commands) as ExampleForm[]).map((form) => ({ kind: e.kind, form, title: FORM_TITLES[form], command: commands[form] }));
}

const EFFECTS: Readonly<Record<PrivacyAction, string>> = {
  drop: 'removed before storage',
  hash: 'stored as HMAC-SHA256 hex with the tracker\'s secret (equal values stay equal)',
  'truncate-ip': 'IPv4 stored with its last octet 0, IPv6 with only its first 48 bits',
  'mask-email': 'stored as first character + ***@ + domain (ada@example.com → a***@example.com)',
};

export function privacyRuleViews(tracker: Tracker): PrivacyRuleView[] {
  return tracker.privacyRules.map((r) => ({ property: r.property, action: r.action, effect: EFFECTS[r.action] }));
}

/** Everything a client needs to send data to `tracker` with `token`, for the CLI and the console alike. */
export function buildIntegrationView(tracker: Tracker, token: string, publicUrl: string): IntegrationView {
  const baseUrl = publicUrl.replace(/\/+$/, '');
  const endpoints = RECORD_KINDS.map((kind) => endpointView(baseUrl, token, kind));
  const event = endpoints.find((e) => e.kind === 'event')!;
  return {
    trackerId: tracker.id,
    trackerName: tracker.name,
    baseUrl,
    token,
    authorizationHeader: `Tracker ${token}`,
    endpoints,
    curl: endpoints.flatMap((e) => curlExamples(e, token)),
    pixelSnippet: `<img src="${escapeHtml(event.pixelUrl)}" width="1" height="1" alt="">`,
    ...sdkSnippets(baseUrl, token),
    segment: buildSegmentView(baseUrl, token),
    privacyRules: privacyRuleViews(tracker),
  };
}

/**
 * Plain text for a terminal. To stay readable it prints every form for /v3/event and the
 * header-token POST for the other endpoints; the structured view holds them all.
 */
export function renderIntegrationViewText(view: IntegrationView): string {
  const lines = [`Integration of tracker ${view.trackerId} (${view.trackerName})`, `Base URL:      ${view.baseUrl}`, `Authorization: ${view.authorizationHeader}`, ''];
  for (const e of view.endpoints) {
    lines.push(
      `/v3/${e.kind}`,
      `  POST         ${e.postUrl}`,
      `  GET          ${e.getUrl}`,
      `  GET data=    ${e.dataUrl}`,
      `  pixel        ${e.pixelUrl}`,
      `  script       ${e.scriptUrl}`,
      '',
    );
  }
  lines.push('curl examples');
  const shown = view.curl.filter((c) => c.kind === 'event' || c.form === 'post-json');
  const order = [...shown.filter((c) => c.kind === 'event'), ...shown.filter((c) => c.kind !== 'event')];
  for (const c of order) lines.push(`  # ${c.title} (/v3/${c.kind})`, `  ${c.command}`, '');
  lines.push('Website (the browser SDK: page views, sessions, tributary.track)', ...view.sdkSnippet.split('\n').map((l) => `  ${l}`), '');
  lines.push('<img> pixel', `  ${view.pixelSnippet}`, '');
  lines.push(...renderSegmentViewText(view.segment));
  lines.push('Personal data');
  if (view.privacyRules.length === 0) lines.push('  no rules: every property is stored as sent');
  for (const r of view.privacyRules) lines.push(`  ${r.property}: ${r.action}, ${r.effect}`);
  return lines.join('\n');
}
