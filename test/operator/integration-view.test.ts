import { execFile } from 'node:child_process';
import { Analytics as SegmentAnalytics } from '@segment/analytics-node';
import RudderAnalytics from '@rudderstack/rudder-sdk-node';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { RECORD_KINDS } from '../../src/core/records/types';
import { buildIntegrationView, renderIntegrationViewText, SDK_STUB, shellQuote, type ExampleForm } from '../../src/operator/integration-view';
import type { SegmentSdk, SegmentView } from '../../src/operator/segment-snippets';
import { builtSdkManifest } from '../../src/core/sdk-manifest';
import { TrackerSchema } from '../../src/core/trackers/types';
import { startTestApi, type TestApi } from '../helpers/api';

const run = promisify(execFile);
const FORMS: ExampleForm[] = ['post-json', 'post-json-token', 'post-gzip', 'get-params', 'get-data', 'pixel'];
const token = 'trk_abcdefghijklmnopqrstuvwxyz0123456789-_ABCDE';
const tracker = TrackerSchema.parse({ id: 'shop', name: 'Shop', tokens: [{ token }] });

const snippet = (view: SegmentView, sdk: SegmentSdk) => view.snippets.find((s) => s.sdk === sdk)!.code;
/** The string given to `name` in a snippet (`name: "…"`, `name = "…"` or `.name("…")`). */
function option(code: string, name: string): string {
  const m = new RegExp(`\\b${name}(?:\\s*[:=]\\s*|\\()("(?:[^"\\\\]|\\\\.)*")`).exec(code);
  if (!m) throw new Error(`no ${name} in ${code}`);
  return JSON.parse(m[1]!) as string;
}
/** The options object a Node SDK snippet passes, evaluated: `new X(…, { … })`. */
const nodeOptions = (code: string) => new Function(`return ${/(\{[^{}]*\})\);$/m.exec(code)![1]!}`)() as Record<string, string>;

describe('buildIntegrationView', () => {
  const view = buildIntegrationView(tracker, token, 'https://ingest.example/base/');

  test('lists the POST, GET, data=, pixel and script URL of every endpoint, token filled in', () => {
    expect(view.baseUrl).toBe('https://ingest.example/base');
    expect(view.endpoints.map((e) => e.kind)).toEqual([...RECORD_KINDS]);
    for (const e of view.endpoints) {
      expect(e.postUrl).toBe(`https://ingest.example/base/v3/${e.kind}`);
      for (const url of [e.getUrl, e.dataUrl, e.pixelUrl, e.scriptUrl]) expect(new URL(url).searchParams.get('_token')).toBe(token);
      expect(new URL(e.pixelUrl).pathname).toBe(`/base/v3/${e.kind}/tracker.gif`);
      expect(new URL(e.scriptUrl).pathname).toBe(`/base/v3/${e.kind}/tracker.js`);
      expect(Object.fromEntries(new URL(e.getUrl).searchParams)).toEqual({ _token: token, ...e.sample });
      const data = new URL(e.dataUrl).searchParams.get('data')!;
      expect(JSON.parse(Buffer.from(data, 'base64url').toString('utf8'))).toEqual(e.sample);
    }
  });

  test('has a curl example for every form of every endpoint, each carrying the token', () => {
    for (const kind of RECORD_KINDS) {
      expect(view.curl.filter((c) => c.kind === kind).map((c) => c.form)).toEqual(FORMS);
    }
    for (const c of view.curl) expect(c.command).toContain(token);
    const byForm = (form: ExampleForm) => view.curl.find((c) => c.kind === 'event' && c.form === form)!.command;
    expect(byForm('post-json')).toContain(`-H 'Authorization: Tracker ${token}'`);
    expect(byForm('post-json-token')).toContain(`"_token":"${token}"`);
    expect(byForm('post-gzip')).toMatch(/\| gzip -c \| curl .*-H 'Content-Encoding: gzip' --data-binary @-$/);
  });

  test('gives an <img> pixel snippet with its ampersands escaped', () => {
    expect(view.pixelSnippet).toMatch(/^<img src="https:\/\/ingest\.example\/base\/v3\/event\/tracker\.gif\?_token=[^"]+" width="1" height="1" alt="">$/);
    expect(view.pixelSnippet).not.toMatch(/&(?!amp;)/);
  });

  test('gives the browser SDK snippet: the stub that queues calls, the current tag, and a tag pinned to the built version with its integrity', () => {
    const [stub, tag] = view.sdkSnippet.split('\n');
    expect(stub).toBe(SDK_STUB);
    expect(tag).toBe(`<script async src="https://ingest.example/base/sdk.js" data-token="${token}"></script>`);
    const manifest = builtSdkManifest()!;
    expect(view.sdkPinnedSnippet).toBe(`${SDK_STUB}\n<script async src="https://ingest.example/base/sdk.${manifest.hash}.js" integrity="${manifest.integrity}" crossorigin="anonymous" data-token="${token}"></script>`);
    expect(renderIntegrationViewText(view)).toContain(tag);
  });

  test('renders as text with every URL and the event curl examples', () => {
    const text = renderIntegrationViewText(view);
    for (const e of view.endpoints) for (const url of [e.postUrl, e.getUrl, e.dataUrl, e.pixelUrl, e.scriptUrl]) expect(text).toContain(url);
    for (const c of view.curl.filter((x) => x.kind === 'event')) expect(text).toContain(c.command);
    expect(text).toContain(view.pixelSnippet);
  });

  test('points Segment’s and RudderStack’s SDKs at /v1 under the public URL, the token as write key', () => {
    const s = view.segment;
    expect(s).toMatchObject({ endpoint: 'https://ingest.example/base/v1', writeKey: token, apiHost: 'ingest.example/base/v1' });
    expect(s.snippets.map((x) => x.sdk)).toEqual(['analytics-js', 'analytics-next', 'analytics-node', 'analytics-python', 'analytics-swift', 'analytics-kotlin', 'rudder-sdk-node', 'http-api']);
    for (const x of s.snippets) expect({ sdk: x.sdk, hasToken: x.code.includes(token) }).toEqual({ sdk: x.sdk, hasToken: true });

    // analytics.js fetches `${cdn}/v1/projects/<key>/settings`, then posts to `${protocol}://${apiHost}/t`.
    const ajs = snippet(s, 'analytics-js');
    expect([option(ajs, '_cdn'), option(ajs, '_writeKey'), option(ajs, 'apiHost'), option(ajs, 'protocol')]).toEqual(['https://ingest.example/base', token, 'ingest.example/base/v1', 'https']);
    expect(ajs).toContain(`analytics.load("${token}", { integrations: { 'Segment.io': { apiHost: "ingest.example/base/v1", protocol: "https" } } });`);
    const next = snippet(s, 'analytics-next');
    expect([option(next, 'writeKey'), option(next, 'cdnURL'), option(next, 'apiHost'), option(next, 'protocol')]).toEqual([token, 'https://ingest.example/base', 'ingest.example/base/v1', 'https']);
    expect(next).toMatch(/AnalyticsBrowser\.load\(\{ writeKey: .*, cdnURL: .* \}, \{ integrations: \{ 'Segment\.io': \{ apiHost: .*, protocol: .* \} \} \}\);$/m);

    // @segment/analytics-node posts to `new URL(path, host)`: the prefix has to be in path.
    const node = nodeOptions(snippet(s, 'analytics-node'));
    expect(node).toEqual({ writeKey: token, host: 'https://ingest.example', path: '/base/v1/batch' });
    expect(new URL(node.path!, node.host).href).toBe('https://ingest.example/base/v1/batch');
    expect(s.snippets.find((x) => x.sdk === 'analytics-node')!.note).toMatch(/path/);
    // analytics-python posts to `host.rstrip('/') + '/v1/batch'`.
    const python = snippet(s, 'analytics-python');
    expect([option(python, 'write_key'), option(python, 'host')]).toEqual([token, 'https://ingest.example/base']);
    expect(python.split('\n')[0]).toBe('import segment.analytics as analytics');
    // The mobile SDKs post to `https://${apiHost}/b` and read `https://${cdnHost}/projects/<key>/settings`.
    for (const sdk of ['analytics-swift', 'analytics-kotlin'] as const) {
      const code = snippet(s, sdk);
      expect({ sdk, apiHost: option(code, 'apiHost'), cdnHost: option(code, 'cdnHost') }).toEqual({ sdk, apiHost: 'ingest.example/base/v1', cdnHost: 'ingest.example/base/v1' });
      expect(s.snippets.find((x) => x.sdk === sdk)!.note).toMatch(/https only/);
    }
    expect(snippet(s, 'analytics-swift')).toContain(`Configuration(writeKey: "${token}")`);
    expect(snippet(s, 'analytics-kotlin')).toContain(`Analytics("${token}", applicationContext) {`);
    // rudder-sdk-node posts to `${dataPlaneUrl}/v1/batch`.
    expect(nodeOptions(snippet(s, 'rudder-sdk-node'))).toEqual({ dataPlaneUrl: 'https://ingest.example/base' });
    expect(snippet(s, 'rudder-sdk-node')).toContain(`new Analytics("${token}", {`);
    expect(snippet(s, 'http-api')).toContain(`curl -sS 'https://ingest.example/base/v1/track' -u '${token}:'`);

    const text = renderIntegrationViewText(view);
    expect(text).toContain('Segment / RudderStack SDKs');
    expect(text).toContain('docs/segment.md');
    for (const x of s.snippets) for (const line of x.code.split('\n').filter(Boolean)) expect(text).toContain(`    ${line}`);
  });

  test('without a path in the public URL, analytics-node takes host alone; over http the mobile SDKs are told they need https', () => {
    const s = buildIntegrationView(tracker, token, 'http://localhost:8080').segment;
    expect(s).toMatchObject({ endpoint: 'http://localhost:8080/v1', apiHost: 'localhost:8080/v1' });
    expect(nodeOptions(snippet(s, 'analytics-node'))).toEqual({ writeKey: token, host: 'http://localhost:8080' });
    expect(option(snippet(s, 'analytics-next'), 'protocol')).toBe('http');
    expect(s.snippets.find((x) => x.sdk === 'analytics-swift')!.note).toMatch(/must be served over https/);
  });

  test('shellQuote survives single quotes', async () => {
    const { stdout } = await run('bash', ['-c', `printf '%s' ${shellQuote("it's a 'test'")}`]);
    expect(stdout).toBe("it's a 'test'");
  });
});

describe('the generated examples work against the running app', () => {
  let api: TestApi;
  let server: Server;
  let baseUrl: string;

  beforeAll(async () => {
    api = await startTestApi();
    server = createServer(api.runtime.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await api.close();
  });

  test('every curl command, run by a shell, is accepted and queues its sample record', async () => {
    const view = buildIntegrationView(api.tracker, api.token, baseUrl);
    for (const example of view.curl) {
      const { stdout } = await run('bash', ['-o', 'pipefail', '-c', example.command]);
      if (example.form === 'pixel') expect(stdout).toBe('200 image/gif\n');
      else expect({ form: example.form, kind: example.kind, body: JSON.parse(stdout) as unknown }).toMatchObject({ body: { accepted: 1 } });
    }
    const records = await api.queuedRecords();
    expect(records).toHaveLength(view.curl.length);
    const events = records.filter((r) => r.kind === 'event');
    expect(events).toHaveLength(FORMS.length);
    for (const e of events) expect(e).toMatchObject({ event: 'signup', uid: 'user-42', sid: 'sess-7f3a9c', properties: { plan: 'pro' } });
  });

  test('every GET URL and the <img> snippet are accepted', async () => {
    const view = buildIntegrationView(api.tracker, api.token, baseUrl);
    const pathOf = (url: string) => url.slice(baseUrl.length);
    for (const e of view.endpoints) {
      expect((await api.http.get(pathOf(e.getUrl))).status).toBe(202);
      expect((await api.http.get(pathOf(e.dataUrl))).status).toBe(202);
      const pixel = await api.http.get(pathOf(e.pixelUrl));
      expect([pixel.status, pixel.headers['content-type']]).toEqual([200, 'image/gif']);
      const script = await api.http.get(pathOf(e.scriptUrl));
      expect(script.status).toBe(200);
      expect(script.headers['content-type']).toMatch(/^application\/javascript/);
    }
    const src = /src="([^"]+)"/.exec(view.pixelSnippet)![1]!.replace(/&amp;/g, '&');
    expect((await api.http.get(pathOf(src))).status).toBe(200);
  });

  test('the Segment snippets work: analytics-node and rudder-sdk-node with their options as given, the curl command, and the settings analytics.js reads', async () => {
    const { tracker: own, token: key } = await api.addTracker();
    const s = buildIntegrationView(own, key, baseUrl).segment;

    const segment = new SegmentAnalytics({ writeKey: '', ...nodeOptions(snippet(s, 'analytics-node')), flushInterval: 50 });
    segment.track({ userId: 'seg-1', event: 'from_node' });
    await segment.closeAndFlush();
    const rudder = new RudderAnalytics(key, { ...nodeOptions(snippet(s, 'rudder-sdk-node')), flushInterval: 50, logLevel: 'error' });
    rudder.track({ userId: 'rs-1', event: 'from_rudder' });
    await rudder.flush();
    const { stdout } = await run('bash', ['-o', 'pipefail', '-c', snippet(s, 'http-api')]);
    expect(JSON.parse(stdout)).toMatchObject({ success: true, accepted: 1 });

    const events = (await api.queuedRecords()).filter((r) => r.trackerId === own.id && r.kind === 'event');
    expect(events.map((r) => [r.event, r.uid]).sort()).toEqual([['from_node', 'seg-1'], ['from_rudder', 'rs-1'], ['signup', 'user-42']]);

    const ajs = snippet(s, 'analytics-js');
    const settingsUrl = `${option(ajs, '_cdn')}/v1/projects/${option(ajs, '_writeKey')}/settings`;
    expect(settingsUrl).toBe(`${baseUrl}/v1/projects/${key}/settings`);
    const settings = await api.http.get(settingsUrl.slice(baseUrl.length));
    expect(settings.status).toBe(200);
    expect(settings.body.integrations['Segment.io']).toMatchObject({ apiKey: key });
  });
});
