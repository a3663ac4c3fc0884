import { call } from './api.js';
import type { RequestFilter, RequestPage } from './request-types.js';

/** The query string of a search; empty criteria are left out. */
function search(filter: RequestFilter, limit: number): string {
  const params = new URLSearchParams({ limit: String(limit) });
  for (const name of ['status', 'code', 'text'] as const) if (filter[name].trim() !== '') params.set(name, filter[name].trim());
  return params.toString();
}

/** The request history of a tracker, and the relay's requests with an unknown token. */
export const requestsApi = {
  tracker: (id: string, filter: RequestFilter, limit = 200) => call<RequestPage>('GET', `/trackers/${encodeURIComponent(id)}/requests?${search(filter, limit)}`),
  unknownToken: (filter: RequestFilter, limit = 200) => call<RequestPage>('GET', `/requests/unknown-token?${search(filter, limit)}`),
};
