import { seededRandom } from '../test/helpers/seeded-random';

/**
 * Realistic event bodies: a web/app analytics event of about 300 bytes with varied names, user and
 * session ids, and a few string and number properties. Seeded, so every run sends the same bytes.
 */
const EVENTS = ['page_view', 'signup', 'login', 'add_to_cart', 'checkout_started', 'purchase', 'search', 'video_play', 'form_submit', 'share'];
const PAGES = ['/', '/pricing', '/docs/getting-started', '/blog/2026/release-notes', '/products/running-shoes', '/account/settings', '/cart', '/search'];
const REFERRERS = ['https://www.google.com/', 'https://news.ycombinator.com/', 'https://twitter.com/', '', 'https://duckduckgo.com/'];
const BROWSERS = ['Chrome 131', 'Firefox 133', 'Safari 18.1', 'Edge 131'];
const COUNTRIES = ['FR', 'DE', 'US', 'GB', 'JP', 'BR', 'IN'];

export function makeEvents(count: number, seed = 1): Array<Record<string, string | number>> {
  const rnd = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rnd() * 16).toString(16)).join('');
  return Array.from({ length: count }, () => ({
    _event: pick(EVENTS),
    _uid: `user-${hex(12)}`,
    _sid: `sess-${hex(16)}`,
    page: pick(PAGES),
    title: 'Tributary — relay your tracking data to Sheets and BigQuery',
    referrer: pick(REFERRERS),
    browser: pick(BROWSERS),
    country: pick(COUNTRIES),
    screen_width: pick([375, 390, 768, 1280, 1440, 1920]),
    duration_ms: Math.floor(rnd() * 60_000),
    amount: Math.round(rnd() * 50_000) / 100,
  }));
}

/** `count` distinct JSON bodies of one event each. */
export function singleBodies(count: number, seed = 1): string[] {
  return makeEvents(count, seed).map((e) => JSON.stringify(e));
}

/** `count` distinct JSON bodies, each an array of `size` events. */
export function batchBodies(count: number, size: number, seed = 1): string[] {
  const events = makeEvents(count * size, seed);
  return Array.from({ length: count }, (_, i) => JSON.stringify(events.slice(i * size, (i + 1) * size)));
}

/** Stands in a body for a text unique to each request (paced-load.ts), so keyed records never repeat. */
export const REQUEST_ID = '{{RID}}';

/**
 * `count` bodies of `size` keyed events each, as v3 arrays (`_id` per record) or as the Segment
 * batches an SDK sends for the same events (`/v1/batch`: a `track` message each with its
 * `messageId`, `timestamp` and `context.library`, the batch's `sentAt`): the same records,
 * so that CPU a record compares the two ways in.
 */
export function keyedBatchBodies(count: number, size: number, format: 'v3' | 'segment', seed = 1): string[] {
  const events = makeEvents(count * size, seed);
  const at = new Date().toISOString();
  return Array.from({ length: count }, (_, i) => {
    const slice = events.slice(i * size, (i + 1) * size);
    if (format === 'v3') return JSON.stringify(slice.map(({ _sid, ...e }, j) => ({ ...e, _id: `${REQUEST_ID}-${j}`, _event_at: at })));
    const batch = slice.map(({ _event, _uid, _sid, ...properties }, j) => ({
      type: 'track',
      event: _event,
      userId: _uid,
      messageId: `${REQUEST_ID}-${j}`,
      timestamp: at,
      properties,
      context: { library: { name: '@segment/analytics-node', version: '3.1.0' } },
    }));
    return JSON.stringify({ batch, sentAt: at });
  });
}
