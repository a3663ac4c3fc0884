import type { RequestEntry, RequestPage } from '../core/requests/request-history';
import { table } from './render';

function outcome(e: RequestEntry): string {
  if (e.status >= 400) return e.code ?? 'refused';
  const parts = [`${e.records} stored`];
  if (e.duplicates) parts.push(`${e.duplicates} duplicate${e.duplicates === 1 ? '' : 's'}`);
  if (e.rejected) parts.push(`${e.rejected} refused (${e.code ?? '?'})`);
  return parts.join(', ');
}

/** One line per request, newest first; the message last, so a long one does not pad the others. */
export function renderRequests(page: RequestPage, what: string, filtered: boolean): string {
  if (page.total === 0) return `No requests kept for ${what} yet.`;
  if (page.matched === 0) return `None of the ${page.total} requests kept for ${what} match.`;
  const unknown = page.entries.some((e) => e.tokenHint !== undefined);
  const head = ['TIME', 'STATUS', 'METHOD', 'PATH', 'BYTES', 'OUTCOME', ...(unknown ? ['TOKEN'] : []), 'IP', 'USER AGENT', 'MESSAGE'];
  const rows = page.entries.map((e) => [
    e.at,
    String(e.status),
    e.method,
    e.path,
    String(e.bytes),
    outcome(e),
    ...(unknown ? [e.tokenHint ?? '-'] : []),
    e.ip,
    e.userAgent ?? '-',
    `${e.message ?? ''}${e.suppressed ? ` (${e.suppressed} more not kept before this one)` : ''}`,
  ]);
  const shown = page.entries.length < page.matched ? `the newest ${page.entries.length} of ` : '';
  const summary = filtered ? `${shown}${page.matched} of ${page.total} requests kept for ${what} match` : `${shown}${page.total} requests kept for ${what}`;
  return [table([head, ...rows]), '', `${summary[0]!.toUpperCase()}${summary.slice(1)}, newest first.`].join('\n');
}
