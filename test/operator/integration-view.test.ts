import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { RECORD_KINDS } from '../../src/core/records/types';
import { buildIntegrationView, renderIntegrationViewText, SDK_STUB, shellQuote, type ExampleForm } from '../../src/operator/integration-view';
import { builtSdkManifest } from '../../src/core/sdk-manifest';
import { TrackerSchema } from '../../src/core/trackers/types';
import { startTestApi, type TestApi } from '../helpers/api';

const run = promisify(execFile);
const FORMS: ExampleForm[] = ['post-json', 'post-json-token', 'post-gzip', 'get-params', 'get-data', 'pixel'];
const token = 'trk_abcdefghijklmnopqrstuvwxyz0123456789-_ABCDE';
const tracker = TrackerSchema.parse({ id: 'shop', name: 'Shop', tokens: [{ token }] });

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
});
