import { uniqueById } from '../shared/batch-records';
import { coalesceUpserts, type MergedChange } from '../shared/coalesce-upserts';
import type { TrackedRecord } from '../../src/core/records/types';
import type { ResolvedSettings } from './config';

/**
 * The events tab of a record: `events`, or with monthly rollover `events_2026_11` for the UTC
 * month of `_received_at`. Records arrive in receive order, so a batch spans at most two months.
 */
export function eventsTabFor(receivedAt: string | Date, settings: Pick<ResolvedSettings, 'tabs' | 'rollover'>): string {
  if (settings.rollover === 'none') return settings.tabs.events;
  const d = typeof receivedAt === 'string' ? new Date(receivedAt) : receivedAt;
  return `${settings.tabs.events}_${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
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

export function partition(records: readonly TrackedRecord[], settings: Pick<ResolvedSettings, 'tabs' | 'rollover'>): Partition {
  const events = new Map<string, TrackedRecord[]>();
  for (const r of uniqueById(records.filter((r) => r.kind === 'event'))) {
    const tab = eventsTabFor(r.receivedAt, settings);
    let list = events.get(tab);
    if (!list) events.set(tab, (list = []));
    list.push(r);
  }
  const users = coalesceUpserts('user', records.filter((r) => r.kind === 'user'));
  const sessions = coalesceUpserts('session', records.filter((r) => r.kind === 'session'));
  return { events, users: users.changes, sessions: sessions.changes, rejected: new Set([...users.rejected, ...sessions.rejected]) };
}
