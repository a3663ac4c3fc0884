import { useEffect, useState } from 'preact/hooks';

export const TABS = ['settings', 'integration', 'destinations', 'sources', 'health', 'traffic', 'live', 'history', 'warehouse'] as const;
export type Tab = (typeof TABS)[number];

/** `sourceId`: the page of one webhook source, under the Sources tab; `destinationId`: one destination's page, under Destinations. */
export type Route = { page: 'trackers' } | { page: 'unknown-token' } | { page: 'tracker'; trackerId: string; tab: Tab; sourceId?: string; destinationId?: string };

/**
 * Hash routes (`#/trackers`, `#/trackers/<id>/<tab>`, `#/trackers/<id>/sources/<source>`,
 * `#/trackers/<id>/destinations/<destination>`, `#/requests/unknown-token`): the server serves one page and needs no fallback.
 */
export function parseHash(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'requests' && parts[1] === 'unknown-token') return { page: 'unknown-token' };
  if (parts[0] === 'trackers' && parts[1]) {
    const tab = (TABS as readonly string[]).includes(parts[2] ?? '') ? (parts[2] as Tab) : 'settings';
    if (tab === 'sources' && parts[3]) return { page: 'tracker', trackerId: parts[1], tab, sourceId: parts[3] };
    if (tab === 'destinations' && parts[3]) return { page: 'tracker', trackerId: parts[1], tab, destinationId: parts[3] };
    return { page: 'tracker', trackerId: parts[1], tab };
  }
  return { page: 'trackers' };
}

export function href(route: Route): string {
  if (route.page === 'trackers') return '#/trackers';
  if (route.page === 'unknown-token') return '#/requests/unknown-token';
  const base = `#/trackers/${encodeURIComponent(route.trackerId)}/${route.tab}`;
  const sub = route.sourceId ?? route.destinationId;
  return sub === undefined ? base : `${base}/${encodeURIComponent(sub)}`;
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
