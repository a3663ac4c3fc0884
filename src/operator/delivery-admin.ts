import type { RedisClient } from '../core/redis/cluster';
import { RetryableError } from '../../connectors/errors';
import { LocalSettingsSchema, warehouseFile } from '../../connectors/local/config';
import type { ExportedFile, ExportFormat, QueryResult } from '../../connectors/local/query';
import { errorMessage } from '../../connectors/local/duckdb-errors';
import type { EngineLimits } from '../../connectors/types';
import { DeadLetterStore, PartitionedDeadLetters, type DeadLetters } from '../../jobs/delivery/dead-letters';
import { combineStatuses, DestinationStatusStore, type DestinationStatus } from '../../jobs/delivery/destination-status';
import { combinePictures, DestinationSeries, type DestinationPicture } from '../../jobs/delivery/destination-series';
import { archiveKeys, backlogIndexKey, backlogMember, partitionDeliveryKeys, recentRecordsKey, trackerBacklogKey, type DeliveryKeys } from '../../jobs/delivery/keys';
import { readArchiveStatus, type ArchiveStatus } from '../../jobs/history/archive-status';
import { BackfillError, backfillProgress, cancelBackfill, DEFAULT_BACKFILL_RESOURCES, startBackfill, type BackfillProgress, type BackfillResource } from '../../jobs/history/backfill';

/** A destination's backfill over its partitions, with the records its history lane still holds. */
export type BackfillView = BackfillProgress & { waiting: number };
import type { Keyspace, PartitionRef } from '../core/redis/keyspace';
import type { DestinationService } from './destination-service';
import type { TrackerStore } from '../core/trackers/store';
import { forgetKeyFile } from './key-files';
import { sleep } from '../core/sleep';
import { requestHistoryKey } from '../core/requests/request-history';
import { BUCKET_MINUTES, bucketOf, WINDOW_MINUTES } from '../core/series/minutes';
import { trafficKey } from '../core/series/traffic';
import { sourceDeliveriesKey } from '../core/trackers/source-deliveries';
import { dedupKeys } from '../ingest/dedup';
import { describeIssues, MAX_DEDUP_WINDOW_HOURS, TrackerSchema, type Destination } from '../core/trackers/types';

type WarehouseReads = typeof import('../../connectors/local/query');

/** Loaded by the warehouse reads only: DuckDB takes about 100 ms to load, which a CLI command that reads Redis alone should not pay. */
function warehouseReads(): WarehouseReads {
  return require('../../connectors/local/query') as WarehouseReads;
}

export type DeliveryAdminErrorCode = 'TRACKER_NOT_FOUND' | 'BACKFILL_REFUSED' | 'NO_LOCAL_DESTINATION' | 'SEVERAL_LOCAL_DESTINATIONS' | 'NOT_LOCAL' | 'INVALID_SETTINGS' | 'NO_WAREHOUSE_YET' | 'WAREHOUSE_BUSY' | 'WAREHOUSE_FAILED';

/** A refusal the caller can show as-is (DuckDB's SQL errors keep their `LINE 1: …` pointer lines). */
export class DeliveryAdminError extends Error {
  override name = 'DeliveryAdminError';
  constructor(
    readonly code: DeliveryAdminErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface DestinationView extends Destination {
  status: DestinationStatus;
  /** Its backfill under way, or the last one (jobs/history/backfill.ts); absent when it never had one. */
  backfill?: BackfillView;
}

/** Traffic buckets that may still exist: the next one (a clock ahead), the window's, and those that expire a day after they end. */
const TRAFFIC_BUCKETS_KEPT = (2 * WINDOW_MINUTES) / BUCKET_MINUTES + 3;

/** What removing a tracker discarded, for the operator to see. */
export interface RemovedTracker {
  removed: string;
  destinations: string[];
  discarded: { queued: number; deadLetters: number; backlog: number };
}

export interface DeliveryAdminDeps {
  destinations: DestinationService;
  trackers: TrackerStore;
  redis: RedisClient;
  keyspace: Keyspace;
  dataDir: string;
  /** DuckDB's memory limit and spill directory for each query and export (WAREHOUSE_MEMORY_MB, WAREHOUSE_TEMP_DIR). Default: the reads' own (128 MiB). */
  warehouse?: EngineLimits;
}

/**
 * What an operator does with delivery, over the existing services: destinations with their status,
 * the dead letters of a destination, and reads of the local warehouse. It holds no CLI concern, so
 * the web console can call it as it is (the CLI and the console share it).
 */
export class DeliveryAdmin {
  constructor(private readonly deps: DeliveryAdminDeps) {}

  async listWithStatus(trackerId: string, now = Date.now()): Promise<DestinationView[]> {
    const tracker = await this.deps.destinations.tracker(trackerId);
    const refs = await this.partitionRefs(trackerId);
    return Promise.all(
      tracker.destinations.map(async (d) => {
        const backfill = await backfillProgress(this.deps.redis, this.deps.keyspace, tracker, d.id);
        return { ...d, status: await this.status(refs, d.id, now), ...(backfill ? { backfill } : {}) };
      }),
    );
  }

  /** A destination's status over all its partitions. */
  private async status(refs: PartitionRef[], destinationId: string, now?: number): Promise<DestinationStatus> {
    return combineStatuses(await Promise.all(refs.map((ref) => new DestinationStatusStore(this.deps.redis, this.keys(ref, destinationId)).read(now))));
  }

  /** Each partition of the tracker. */
  private async partitionRefs(trackerId: string): Promise<PartitionRef[]> {
    const partitions = await this.deps.destinations.partitions(trackerId);
    return Array.from({ length: partitions }, (_, partition) => ({ trackerId, partition }));
  }

  private keys(ref: PartitionRef, destinationId: string): DeliveryKeys {
    return partitionDeliveryKeys(this.deps.keyspace, { ...ref, destinationId });
  }

  /**
   * Removes a destination with everything Redis keeps for it: records still queued, dead letters,
   * cursor, status; the worker that holds it deletes its disk spool. Returns what was discarded, for the operator to see. The router may still
   * append for up to its tracker cache (a second); such records are dropped with the next removal
   * of a destination of that id, or delivered if one of that id is added again.
   */
  async removeDestination(trackerId: string, destinationId: string): Promise<{ queued: number; deadLetters: number }> {
    const refs = await this.partitionRefs(trackerId);
    const status = await this.status(refs, destinationId);
    await this.deps.destinations.remove(trackerId, destinationId);
    await this.deleteDestinationKeys(refs, destinationId);
    return { queued: status.queued, deadLetters: status.deadLettered };
  }

  private async deleteDestinationKeys(refs: PartitionRef[], destinationId: string): Promise<void> {
    // One DEL per partition: a partition's keys share a slot, different partitions' may not.
    for (const ref of refs) {
      const keys = this.keys(ref, destinationId);
      await this.deps.redis.del(keys.stream, keys.cursor, keys.deadLetters, keys.status, keys.lock, keys.spilled, keys.queued, keys.history, keys.historyCursor, keys.historyQueued, keys.backfill, ...new DestinationSeries(this.deps.redis, keys).keysAt());
    }
  }

  /**
   * Removes a tracker (one that cannot be read too) with what Redis keeps for it: its tokens stop
   * at once (401); each destination goes as removeDestination does; its backlog, recent records,
   * archive stream not yet on disk, request history, traffic counts, webhook deliveries and client
   * keys seen are deleted; its records still waiting to be routed are discarded by the router
   * (TrackerStore.remove's mark). Files stay: the archive's files under ARCHIVE_DIR and a local
   * warehouse's DuckDB file are the owner's data. A routing step under way at that moment may write
   * once more into a destination's stream: those keys are deleted again after `sweepAfterMs`.
   * Roles on it are AccessService.forgetTracker's (src/operator/remove-tracker.ts).
   */
  async removeTracker(trackerId: string, sweepAfterMs = 1_500): Promise<RemovedTracker> {
    // An id that could never have been created is not worth a Redis key built from it.
    const outline = TrackerSchema.shape.id.safeParse(trackerId).success ? await this.deps.trackers.outline(trackerId) : undefined;
    if (!outline) throw new DeliveryAdminError('TRACKER_NOT_FOUND', `No tracker with id "${trackerId}".`);
    const refs = Array.from({ length: outline.partitions }, (_, partition) => ({ trackerId, partition }));
    const statuses = await Promise.all(outline.destinationIds.map((id) => this.status(refs, id)));
    const backlog = await this.backlogOf(refs);
    await this.deps.trackers.remove(trackerId);
    const sweep = async () => {
      for (const id of outline.destinationIds) await this.deleteDestinationKeys(refs, id);
      // Its request history, webhook deliveries and traffic counts go too (relay-wide keys, one slot).
      const global = this.deps.keyspace.global;
      const now = bucketOf(Date.now());
      const traffic = Array.from({ length: TRAFFIC_BUCKETS_KEPT }, (_, i) => trafficKey(global, trackerId, now + 1 - i));
      await this.deps.redis.del(requestHistoryKey(global, trackerId), ...outline.sourceIds.map((id) => sourceDeliveriesKey(global, trackerId, id)), ...traffic);
      for (const ref of refs) {
        const prefix = this.deps.keyspace.prefixOf(ref);
        const archive = archiveKeys(prefix, trackerId, ref.partition);
        await this.deps.redis.del(trackerBacklogKey(prefix, trackerId, ref.partition), recentRecordsKey(prefix, trackerId, ref.partition), archive.stream, archive.archived, archive.status);
        await this.deps.redis.srem(backlogIndexKey(prefix), backlogMember(ref));
        // Its client keys seen, or a tracker made again with this id would answer their repeats as duplicates and not store them.
        await this.deps.redis.del(...dedupKeys(prefix, trackerId, '', MAX_DEDUP_WINDOW_HOURS, Date.now(), ref.partition).slice(1));
      }
    };
    await sweep();
    await sleep(sweepAfterMs);
    await sweep();
    for (const id of outline.destinationIds) forgetKeyFile(this.deps.dataDir, trackerId, id);
    return {
      removed: trackerId,
      destinations: outline.destinationIds,
      discarded: { queued: statuses.reduce((n, s) => n + s.queued, 0), deadLetters: statuses.reduce((n, s) => n + s.deadLettered, 0), backlog },
    };
  }

  /**
   * A destination's last 24 hours over all its partitions: delivered, dead-lettered, backlog and
   * lag per minute, and the moments its state changed (each naming its partition when there are several).
   */
  async traffic(trackerId: string, destinationId: string, now = Date.now()): Promise<DestinationPicture> {
    await this.deps.destinations.get(trackerId, destinationId);
    const refs = await this.partitionRefs(trackerId);
    return combinePictures(await Promise.all(refs.map((ref) => new DestinationSeries(this.deps.redis, this.keys(ref, destinationId)).read(now))));
  }

  /** Records that arrived while the tracker had no destination; the next destination added gets them. */
  async backlog(trackerId: string): Promise<number> {
    return this.backlogOf(await this.partitionRefs(trackerId));
  }

  private async backlogOf(refs: PartitionRef[]): Promise<number> {
    const lengths = await Promise.all(refs.map((ref) => this.deps.redis.xlen(trackerBacklogKey(this.deps.keyspace.prefixOf(ref), ref.trackerId, ref.partition))));
    return lengths.reduce((a, b) => a + b, 0);
  }

  /**
   * Sends the archived records of a time range to one destination again, through its rules
   * (jobs/history/backfill.ts): `resources`, or events, users and sessions when none are named.
   */
  async startBackfill(trackerId: string, destinationId: string, range: { since: Date; until: Date; resources?: readonly BackfillResource[] }): Promise<BackfillView> {
    const tracker = await this.deps.destinations.tracker(trackerId);
    await this.deps.destinations.get(trackerId, destinationId);
    try {
      await startBackfill(this.deps.redis, this.deps.keyspace, tracker, destinationId, { ...range, resources: range.resources ?? DEFAULT_BACKFILL_RESOURCES });
    } catch (err) {
      if (err instanceof BackfillError) throw new DeliveryAdminError('BACKFILL_REFUSED', err.message);
      throw err;
    }
    return (await this.backfill(trackerId, destinationId))!;
  }

  /** The destination's backfill under way, or the last one; undefined when it never had one. */
  async backfill(trackerId: string, destinationId: string): Promise<BackfillView | undefined> {
    const tracker = await this.deps.destinations.tracker(trackerId);
    await this.deps.destinations.get(trackerId, destinationId);
    return backfillProgress(this.deps.redis, this.deps.keyspace, tracker, destinationId);
  }

  /** Cancels the destination's backfill; what its history lane holds is still delivered. */
  async cancelBackfill(trackerId: string, destinationId: string): Promise<boolean> {
    const tracker = await this.deps.destinations.tracker(trackerId);
    await this.deps.destinations.get(trackerId, destinationId);
    return cancelBackfill(this.deps.redis, this.deps.keyspace, tracker, destinationId);
  }

  /** What the tracker's archive holds: the history backfills and replays read. */
  async archive(trackerId: string): Promise<ArchiveStatus> {
    const tracker = await this.deps.destinations.tracker(trackerId);
    return readArchiveStatus(this.deps.redis, this.deps.keyspace, tracker);
  }

  /** The dead letters of an existing destination: a mistyped id is an error, not an empty list. */
  async deadLetters(trackerId: string, destinationId: string): Promise<{ destination: Destination; store: DeadLetters }> {
    const destination = await this.deps.destinations.get(trackerId, destinationId);
    const stores = (await this.partitionRefs(trackerId)).map((ref) => new DeadLetterStore(this.deps.redis, this.keys(ref, destinationId)));
    return { destination, store: stores.length === 1 ? stores[0]! : new PartitionedDeadLetters(stores) };
  }

  /** `maxRows` caps what is read (the console shows a screenful); the CLI reads everything. */
  async query(trackerId: string, sql: string, destinationId?: string, maxRows?: number): Promise<QueryResult> {
    const file = await this.warehouseFile(trackerId, destinationId);
    return this.onWarehouse(() => warehouseReads().queryWarehouse(file, sql, { maxRows, ...(this.deps.warehouse ? { limits: this.deps.warehouse } : {}) }));
  }

  async export(trackerId: string, format: ExportFormat, outDir: string, destinationId?: string): Promise<ExportedFile[]> {
    const file = await this.warehouseFile(trackerId, destinationId);
    return this.onWarehouse(() => warehouseReads().exportWarehouse(file, format, outDir, this.deps.warehouse ? { limits: this.deps.warehouse } : {}));
  }

  /** The file of the tracker's `local` destination: the one named, or the only one there is. */
  async warehouseFile(trackerId: string, destinationId?: string): Promise<string> {
    const destination = destinationId === undefined ? await this.onlyLocal(trackerId) : await this.deps.destinations.get(trackerId, destinationId);
    if (destination.type !== 'local') throw new DeliveryAdminError('NOT_LOCAL', `Destination ${destination.id} of tracker ${trackerId} is of type ${destination.type}, not local: only the local warehouse can be queried here.`);
    const settings = LocalSettingsSchema.safeParse(destination.settings);
    if (!settings.success) throw new DeliveryAdminError('INVALID_SETTINGS', `Invalid local settings of destination ${destination.id}: ${describeIssues(settings.error, 'settings')}`);
    return warehouseFile(this.deps.dataDir, trackerId, settings.data);
  }

  private async onlyLocal(trackerId: string): Promise<Destination> {
    const locals = (await this.deps.destinations.list(trackerId)).filter((d) => d.type === 'local');
    if (locals.length === 1) return locals[0]!;
    if (locals.length === 0) throw new DeliveryAdminError('NO_LOCAL_DESTINATION', `Tracker ${trackerId} has no local destination.`);
    throw new DeliveryAdminError('SEVERAL_LOCAL_DESTINATIONS', `Tracker ${trackerId} has several local destinations (${locals.map((d) => d.id).join(', ')}); name one.`);
  }

  /** Whatever went wrong in the warehouse (SQL, a missing file, a held lock) is the caller's to read. */
  private async onWarehouse<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      // DuckDB's errors may come from another realm (jest), where `instanceof Error` fails.
      const code = err instanceof warehouseReads().WarehouseMissingError ? 'NO_WAREHOUSE_YET' : err instanceof RetryableError ? 'WAREHOUSE_BUSY' : 'WAREHOUSE_FAILED';
      throw new DeliveryAdminError(code, errorMessage(err));
    }
  }

}
