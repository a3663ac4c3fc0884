import { diff, maskValue } from '../../src/core/access/audit-diff';

describe('what an audit entry keeps of a change', () => {
  test('field by field; named items (destinations, sources, tokens, rules) by name', () => {
    const before = { name: 'Shop', destinations: [{ id: 'bq', settings: { dataset: 'a' } }, { id: 'pg', settings: {} }] };
    const after = { name: 'Shop EU', destinations: [{ id: 'bq', settings: { dataset: 'b' } }] };
    expect(diff(before, after)).toEqual([
      { path: 'name', before: 'Shop', after: 'Shop EU' },
      { path: 'destinations[bq].settings.dataset', before: 'a', after: 'b' },
      { path: 'destinations[pg]', before: { id: 'pg', settings: {} } },
    ]);
  });

  test('never a secret: a changed one is listed with both sides masked, wherever it sits', () => {
    const before = { privacySecret: 'canary-hmac-old-0000000000', sources: [{ id: 'gh', secret: 'canary-gh-old' }], destinations: [{ id: 'pg', settings: { url: 'postgres://u:canary-url-pass@db/x', password: 'canary-pg-old' } }] };
    const after = { privacySecret: 'canary-hmac-new-0000000000', sources: [{ id: 'gh', secret: 'canary-gh-new', previousSecret: 'canary-gh-old' }], destinations: [{ id: 'pg', settings: { url: 'postgres://u:canary-url-pass2@db/x', password: 'canary-pg-new' } }] };
    const fields = diff(before, after);
    expect(fields.map((f) => f.path)).toEqual(['privacySecret', 'sources[gh].secret', 'sources[gh].previousSecret', 'destinations[pg].settings.url', 'destinations[pg].settings.password']);
    expect(JSON.stringify(fields)).not.toMatch(/canary-/);
    expect(fields[3]).toEqual({ path: 'destinations[pg].settings.url', before: 'postgres://u:[redacted]@db/x', after: 'postgres://u:[redacted]@db/x' });
    // A whole new object (a tracker created, a source added) is masked inside too.
    expect(JSON.stringify(diff(undefined, after))).not.toMatch(/canary-/);
    expect(JSON.stringify(maskValue({ tokens: [{ token: 'trk_abcdefghijklmnopqrstuvwxyz0123456789' }] }))).toBe('{"tokens":[{"token":"trk_abcd…"}]}');
  });
});
