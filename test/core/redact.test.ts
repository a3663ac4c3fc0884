import { isSecretParameter, redactedJson, redactQueryString, restoreRedacted, tokenHint } from '../../src/core/redact';

test('query strings keep their parameters with every credential-like value redacted', () => {
  expect(redactQueryString('')).toBe('');
  expect(redactQueryString('_token=trk_abc&_event=signup&plan=pro')).toBe('_token=[redacted]&_event=signup&plan=pro');
  expect(redactQueryString('api_key=1&apiKey=2&access_key=3&client_secret=4&sig=5&signature=6&password=7&Authorization=8&n=9')).toBe(
    'api_key=[redacted]&apiKey=[redacted]&access_key=[redacted]&client_secret=[redacted]&sig=[redacted]&signature=[redacted]&password=[redacted]&Authorization=[redacted]&n=9',
  );
  // A repeated secret is redacted once, under its name; other values keep their encoding.
  expect(redactQueryString('_token=a&_token=b&q=a%20b')).toBe('_token=[redacted]&q=a+b');
  expect(isSecretParameter('_event')).toBe(false);
  expect(isSecretParameter('keyword')).toBe(false);
});

test('a token hint tells tokens apart without being usable', () => {
  expect(tokenHint('trk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg')).toBe('trk_AbCd…');
  expect(tokenHint('customtokencustomtokencustom')).toBe('cust…');
});

test('a URL with a password is shown without it, whatever its setting is called, and sent back so it keeps the stored one', () => {
  const stored = { url: 'postgres://writer:s3cret@db.example.com:5432/shop?sslmode=require', endpoint: 'https://bq.example.com:443/v2', password: 'pw' };
  const shown = JSON.parse(redactedJson(stored)) as Record<string, unknown>;
  expect(shown).toEqual({ url: 'postgres://writer:[redacted]@db.example.com:5432/shop?sslmode=require', endpoint: 'https://bq.example.com:443/v2', password: '[redacted]' });
  expect(restoreRedacted(shown, stored)).toEqual(stored);
  // A URL changed beside its redacted password is taken as sent.
  expect(restoreRedacted({ url: 'postgres://writer:[redacted]@other.example.com/shop' }, stored)).toEqual({ url: 'postgres://writer:[redacted]@other.example.com/shop' });
});
