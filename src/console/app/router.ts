import { useEffect, useState } from 'preact/hooks';

export const TABS = ['settings', 'integration', 'destinations', 'sources', 'health', 'traffic', 'live', 'history', 'warehouse', 'audit'] as const;
export type Tab = (typeof TABS)[number];

/** Pages of the top bar that have no parameter. */
const PLAIN_PAGES = ['people', 'tokens', 'audit', 'account'] as const;
type PlainPage = (typeof PLAIN_PAGES)[number];

/** `sourceId`: the page of one webhook source, under the Sources tab; `destinationId`: one destination's page, under Destinations. */
export type Route =
  | { page: 'trackers' }
  | { page: 'unknown-token' }
  | { page: PlainPage }
  | { page: 'welcome'; code: string }
  | { page: 'tracker'; trackerId: string; tab: Tab; sourceId?: string; destinationId?: string };

/**
 * Hash routes (`#/trackers`, `#/trackers/<id>/<tab>`, `#/trackers/<id>/sources/<source>`,
 * `#/trackers/<id>/destinations/<destination>`, `#/requests/unknown-token`, `#/people`, `#/tokens`,
 * `#/audit`, `#/account`, and an invitation's `#/welcome/<code>`): the server serves one page and
 * needs no fallback.
 */
export function parseHash(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'requests' && parts[1] === 'unknown-token') return { page: 'unknown-token' };
  if (parts[0] === 'welcome' && parts[1]) return { page: 'welcome', code: parts[1] };
  if ((PLAIN_PAGES as readonly string[]).includes(parts[0] ?? '') && parts.length === 1) return { page: parts[0] as PlainPage };
  if (parts[0] === 'trackers' && parts[1]) {
    const tab = (TABS as readonly string[]).includes(parts[2] ?? '') ? (parts[2] as Tab) : 'settings';
    if (tab === 'sources' && parts[3]) return { page: 'tracker', trackerId: parts[1], tab, sourceId: parts[3] };
    if (tab === 'destinations' && parts[3]) return { page: 'tracker', trackerId: parts[1], tab, destinationId: parts[3] };
    return { page: 'tracker', trackerId: parts[1], tab };
  }
  return { page: 'trackers' };
}

export function href(route: Route): string {
  switch (route.page) {
    case 'trackers':
      return '#/trackers';
    case 'unknown-token':
      return '#/requests/unknown-token';
    case 'welcome':
      return `#/welcome/${encodeURIComponent(route.code)}`;
    case 'tracker': {
      const base = `#/trackers/${encodeURIComponent(route.trackerId)}/${route.tab}`;
      const sub = route.sourceId ?? route.destinationId;
      return sub === undefined ? base : `${base}/${encodeURIComponent(sub)}`;
    }
    default:
      return `#/${route.page}`;
  }
}

export function navigate(route: Route): void {
  location.hash = href(route);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}
