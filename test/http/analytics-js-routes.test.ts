import { readdirSync } from 'node:fs';
import path from 'node:path';
import { startTestApi, type TestApi } from '../helpers/api';

/** Segment's analytics.js, from the relay at the paths of Segment's CDN. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ PUBLIC_URL: 'https://relay.example/track' });
});
afterAll(async () => {
  await api.close();
});

const umd = path.join(path.dirname(require.resolve('@segment/analytics-next')), '..', 'umd');

test("the snippet's script, as sent or gzipped, and the chunks it loads; nothing else", async () => {
  const plain = await api.http.get(`/analytics.js/v1/${api.token}/analytics.min.js`).set('Accept-Encoding', 'identity');
  expect(plain.status).toBe(200);
  expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
  expect(plain.text).toContain('analytics-next/bundles/');
  const zipped = await api.http.get(`/analytics.js/v1/${api.token}/platform/analytics.min.js`).set('Accept-Encoding', 'gzip').buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => done(null, Buffer.concat(chunks)));
  });
  expect(zipped.headers['content-encoding']).toBe('gzip');
  expect(zipped.headers['cache-control']).toMatch(/max-age=3600/);

  const chunk = readdirSync(umd).find((n) => /\.bundle\.[0-9a-f]+\.js$/.test(n))!;
  const loaded = await api.http.get(`/analytics-next/bundles/${chunk}`).set('Accept-Encoding', 'identity');
  expect(loaded.status).toBe(200);
  expect(loaded.headers['cache-control']).toMatch(/immutable/);
  for (const path of ['/analytics-next/bundles/..%2Fpackage.json', '/analytics-next/bundles/index.js', '/analytics-next/bundles/x.bundle.00.js', '/analytics.js/v1/a%22b/analytics.min.js']) {
    expect([path, (await api.http.get(path)).status]).toEqual([path, 404]);
  }
  // supertest has undone the gzip: the same script either way.
  expect((zipped.body as Buffer).toString('utf8')).toBe(plain.text);
});

test('with PUBLIC_URL set, the settings name it, path included, whatever host was asked', async () => {
  const res = await api.http.get(`/v1/projects/${api.token}/settings`).set('Host', 'internal:3000');
  expect(res.body.integrations['Segment.io']).toMatchObject({ apiHost: 'relay.example/track/v1', protocol: 'https' });
});
