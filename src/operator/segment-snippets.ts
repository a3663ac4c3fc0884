/** The SDKs the integration view shows how to point at the relay, in the order shown. */
export type SegmentSdk = 'analytics-js' | 'analytics-next' | 'analytics-node' | 'analytics-python' | 'analytics-swift' | 'analytics-kotlin' | 'rudder-sdk-node' | 'http-api';

export interface SdkSnippet {
  sdk: SegmentSdk;
  title: string;
  /** Ready to paste, with the relay's address and the write key filled in. */
  code: string;
  /** What to know before pasting it, when there is something. */
  note?: string;
}

/** Segment's and RudderStack's SDKs pointed at the relay's `/v1` (docs/segment.md). */
export interface SegmentView {
  /** Where Segment's HTTP API answers: `<base URL>/v1`. */
  endpoint: string;
  /** The write key the SDKs are given: the tracker token. */
  writeKey: string;
  /** `<host>[/<path>]/v1` without a scheme: analytics.js's `apiHost`, and the mobile SDKs' `apiHost` and `cdnHost`. */
  apiHost: string;
  snippets: SdkSnippet[];
}

/** A string literal for JavaScript, Python and Swift alike (the values are URLs and tokens). */
const str = (value: string) => JSON.stringify(value);
/** Kotlin's strings also interpolate `$`. */
const kotlinStr = (value: string) => str(value).replace(/\$/g, '\\$');
const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/** Every SDK's settings for one relay address and write key; `baseUrl` has no trailing slash. */
export function buildSegmentView(baseUrl: string, token: string): SegmentView {
  const url = new URL(baseUrl);
  const prefix = url.pathname.replace(/\/+$/, '');
  const apiHost = `${url.host}${prefix}/v1`;
  const protocol = url.protocol.replace(/:$/, '');
  const key = str(token);
  const segmentIo = `{ integrations: { 'Segment.io': { apiHost: ${str(apiHost)}, protocol: ${str(protocol)} } } }`;
  const httpsOnly = `https only: the SDK adds https:// to both hosts itself${protocol === 'https' ? '.' : ', so the relay must be served over https (PUBLIC_URL is http).'}`;
  // @segment/analytics-node builds `new URL(path, host)`: an absolute path drops any path in host.
  const nodeOptions = prefix ? `host: ${str(url.origin)}, path: ${str(`${prefix}/v1/batch`)}` : `host: ${str(url.origin)}`;

  const snippets: SdkSnippet[] = [
    {
      sdk: 'analytics-js',
      title: 'analytics.js snippet',
      code: [
        `t.src = ${str(`${baseUrl}/analytics.js/v1/`)} + key + "/analytics.min.js";`,
        `analytics._writeKey = ${key};`,
        `analytics._cdn = ${str(baseUrl)};`,
        `analytics.load(${key}, ${segmentIo});`,
      ].join('\n'),
      note: "In Segment's snippet, replace t.src, _writeKey and the analytics.load call with these lines, and add _cdn. The relay serves analytics.js, the parts it loads later and its settings: nothing is loaded from Segment.",
    },
    {
      sdk: 'analytics-next',
      title: 'analytics.js from npm (@segment/analytics-next)',
      code: [`import { AnalyticsBrowser } from '@segment/analytics-next';`, '', `export const analytics = AnalyticsBrowser.load({ writeKey: ${key}, cdnURL: ${str(baseUrl)} }, ${segmentIo});`].join('\n'),
    },
    {
      sdk: 'analytics-node',
      title: 'Node.js (@segment/analytics-node)',
      code: [`import { Analytics } from '@segment/analytics-node';`, '', `const analytics = new Analytics({ writeKey: ${key}, ${nodeOptions} });`].join('\n'),
      ...(prefix ? { note: 'host takes no path (an absolute path replaces it): the relay’s path goes in path.' } : {}),
    },
    {
      sdk: 'analytics-python',
      title: 'Python (segment-analytics-python)',
      code: ['import segment.analytics as analytics', '', `analytics.write_key = ${key}`, `analytics.host = ${str(baseUrl)}`].join('\n'),
    },
    {
      sdk: 'analytics-swift',
      title: 'iOS (analytics-swift)',
      code: [`let analytics = Analytics(configuration: Configuration(writeKey: ${key})`, `    .apiHost(${str(apiHost)})`, `    .cdnHost(${str(apiHost)}))`].join('\n'),
      note: httpsOnly,
    },
    {
      sdk: 'analytics-kotlin',
      title: 'Android (analytics-kotlin)',
      code: [`val analytics = Analytics(${kotlinStr(token)}, applicationContext) {`, `    apiHost = ${kotlinStr(apiHost)}`, `    cdnHost = ${kotlinStr(apiHost)}`, '}'].join('\n'),
      note: httpsOnly,
    },
    {
      sdk: 'rudder-sdk-node',
      title: 'RudderStack Node.js (@rudderstack/rudder-sdk-node)',
      code: [`import Analytics from '@rudderstack/rudder-sdk-node';`, '', `const client = new Analytics(${key}, { dataPlaneUrl: ${str(baseUrl)} });`].join('\n'),
      note: `RudderStack's other SDKs: data plane URL ${baseUrl}, write key ${token}.`,
    },
    {
      sdk: 'http-api',
      title: 'HTTP API (curl), the write key as the Basic user name',
      code: `curl -sS ${shellQuote(`${baseUrl}/v1/track`)} -u ${shellQuote(`${token}:`)} -H 'Content-Type: application/json' -d ${shellQuote(JSON.stringify({ userId: 'user-42', event: 'signup', properties: { plan: 'pro' } }))}`,
    },
  ];
  return { endpoint: `${baseUrl}/v1`, writeKey: token, apiHost, snippets };
}

/** The view as terminal text, each snippet indented under its title. */
export function renderSegmentViewText(view: SegmentView): string[] {
  const lines = [`Segment / RudderStack SDKs (write key = the token; docs/segment.md)`, `  Endpoint:  ${view.endpoint}`, `  apiHost:   ${view.apiHost}`, ''];
  for (const s of view.snippets) {
    lines.push(`  # ${s.title}`);
    if (s.note) lines.push(`  # ${s.note}`);
    lines.push(...s.code.split('\n').map((l) => (l ? `    ${l}` : '')), '');
  }
  return lines;
}
