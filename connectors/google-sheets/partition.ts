import { uniqueById } from '../shared/batch-records';
import { coalesceUpserts, type MergedChange } from '../shared/coalesce-upserts';
import type { TrackedRecord } from '../../src/core/records/types';
import type { ResolvedSettings } from './config';
import { renderTab } from './tab-template';

type TabSettings = Pick<ResolvedSettings, 'tabs' | 'rollover' | 'tabTemplate'>;

/**
 * The events tab of a record: `events`, or with monthly rollover `events_2026_11` for the UTC
 * month of `_received_at`; with a `tab` template, the name it gives the record's `_event` instead
 * of `events` (tab-template.ts). Records arrive in receive order, so a batch spans at most two
 * months. A name that would be the users' or the sessions' tab is marked as events', so that an
 * event called `users` never writes into the users tab. `event` undefined: the template as it is
 * (for status views, where no record is at hand).
 */
export function eventsTabFor(receivedAt: string | Date, settings: TabSettings, event?: string): string {
  const base = settings.tabTemplate === undefined ? settings.tabs.events : event === undefined ? settings.tabTemplate : renderTab(settings.tabTemplate, event);
  let name = base;
  if (settings.rollover !== 'none') {
    const d = typeof receivedAt === 'string' ? new Date(receivedAt) : receivedAt;
    name = `${base}_${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
  }
  const lower = name.toLowerCase();
  return lower === settings.tabs.users.toLowerCase() || lower === settings.tabs.sessions.toLowerCase() ? `${name} (events)` : name;
}

/** One batch, grouped by tab. */
export interface Partition {
  /** Events by tab, each id once, in batch order. */
  events: Map<string, TrackedRecord[]>;
  users: MergedChange[];
  sessions: MergedChange[];
  /** Users without `_uid`, sessions without `_sid`: nothing to key them on. */
  rejected: Set<TrackedRecord>;
}

export function partition(records: readonly TrackedRecord[], settings: TabSettings): Partition {
  const events = new Map<string, TrackedRecord[]>();
  for (const r of uniqueById(records.filter((r) => r.kind === 'event'))) {
    const tab = eventsTabFor(r.receivedAt, settings, r.event);
    let list = events.get(tab);
    if (!list) events.set(tab, (list = []));
    list.push(r);
  }
  const users = coalesceUpserts('user', records.filter((r) => r.kind === 'user'));
  const sessions = coalesceUpserts('session', records.filter((r) => r.kind === 'session'));
  return { events, users: users.changes, sessions: sessions.changes, rejected: new Set([...users.rejected, ...sessions.rejected]) };
}
