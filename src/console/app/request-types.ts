/** One kept request, as `GET /admin/api/trackers/:id/requests` answers it (src/core/requests/request-history.ts). */
export interface RequestEntry {
  at: string;
  method: string;
  endpoint: string;
  path: string;
  query?: string;
  status: number;
  code?: string;
  message?: string;
  bytes: number;
  records: number;
  rejected?: number;
  duplicates?: number;
  userAgent?: string;
  ip: string;
  tokenHint?: string;
  suppressed?: number;
}

export interface RequestPage {
  total: number;
  matched: number;
  entries: RequestEntry[];
}

export interface RequestFilter {
  status: string;
  code: string;
  text: string;
}
