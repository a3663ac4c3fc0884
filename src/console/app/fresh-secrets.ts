/**
 * A webhook source's signing secret is in the answer that made it (added, rotated) and `[redacted]`
 * in every later one. The add form's answer is carried here to the source's page, which takes it
 * once: it lives in that page's state, and a reload or another visit shows it hidden.
 */
const fresh = new Map<string, string>();

export function keepFreshSecret(trackerId: string, sourceId: string, secret: string): void {
  fresh.set(`${trackerId}/${sourceId}`, secret);
}

export function takeFreshSecret(trackerId: string, sourceId: string): string | undefined {
  const key = `${trackerId}/${sourceId}`;
  const secret = fresh.get(key);
  fresh.delete(key);
  return secret;
}
