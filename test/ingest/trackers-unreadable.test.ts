import { trackersUnreadable } from '../../src/ingest/ingest-route';
import { StoredSecretError } from '../../src/core/secrets/tracker-secrets';

test('a sender told the trackers cannot be read learns Redis’s words, never a key id or the key file', () => {
  const redisDown = trackersUnreadable(new Error('Connection is closed.'), 5);
  expect(redisDown).toMatchObject({ status: 503, code: 'ERR_QUEUE_UNAVAILABLE', message: 'Trackers cannot be read: Connection is closed.', headers: { 'Retry-After': '5' } });
  const secret = trackersUnreadable(new StoredSecretError('unknown-key', '2026-11-29-869c', 'shop', 'sources/gh/secret', 'tracker shop: sources/gh/secret is sealed under key 2026-11-29-869c, which /etc/tributary/keys.json does not hold'), 5);
  expect(secret.status).toBe(503);
  expect(secret.message).not.toMatch(/869c|keys\.json|sources\/gh/);
  expect(secret.message).toContain('the relay’s log says which');
});
