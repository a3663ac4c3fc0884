import type { RedisClient } from '../../src/core/redis/cluster';
import type { Keyspace } from '../../src/core/redis/keyspace';
import type { Tracker } from '../../src/core/trackers/types';
import { archiveKeys } from '../delivery/keys';

/** What a tracker's archive holds, over its partitions (jobs/history/archiver.ts). */
export interface ArchiveStatus {
  /** Days kept; 0: the tracker keeps no archive. */
  days: number;
  /** Records archived since the archive began (the files keep the last `days` of them). */
  records: number;
  /** Bytes on disk, as the archivers last looked (once a minute). */
  bytes: number;
  /** The oldest day on disk (UTC, `2026-11-01`); null when nothing is. */
  oldestDay: string | null;
  /** Routing steps accepted and not yet on disk (a few while the archiver keeps up). */
  waiting: number;
  /** What went wrong since the last frame archived, as an archiver said it; null when nothing did. */
  lastError: string | null;
  /**
   * Records up to this id were archived in a directory another worker host has (no shared
   * ARCHIVE_DIR): history before it is not read from here. Null when none is missing.
   */
  missingThrough: string | null;
  /** The last time the archive stream dropped steps before they reached the disk (the archiver was behind by more than its cap); null when never. */
  lastGap: string | null;
}

export async function readArchiveStatus(redis: RedisClient, keyspace: Keyspace, tracker: Pick<Tracker, 'id' | 'partitions' | 'archiveDays'>): Promise<ArchiveStatus> {
  const parts = await Promise.all(
    Array.from({ length: tracker.partitions }, async (_, partition) => {
      const keys = archiveKeys(keyspace.prefixOf({ trackerId: tracker.id, partition }), tracker.id, partition);
      const [status, waiting] = await Promise.all([redis.hgetall(keys.status), redis.xlen(keys.stream)]);
      return { status, waiting };
    }),
  );
  const days = parts.map((p) => p.status.oldestDay).filter((d): d is string => Boolean(d)).sort();
  return {
    days: tracker.archiveDays,
    records: parts.reduce((n, p) => n + Number(p.status.records ?? 0), 0),
    bytes: parts.reduce((n, p) => n + Number(p.status.bytes ?? 0), 0),
    oldestDay: days[0] ?? null,
    waiting: parts.reduce((n, p) => n + p.waiting, 0),
    lastError: parts.map((p) => p.status.lastError).find((e) => Boolean(e)) ?? null,
    missingThrough: parts.map((p) => p.status.missingThrough).find((e) => Boolean(e)) ?? null,
    lastGap: parts.map((p) => p.status.lastGap).find((e) => Boolean(e)) ?? null,
  };
}
