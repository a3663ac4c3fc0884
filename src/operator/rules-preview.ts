import { recentRecords } from '../../jobs/routing/recent-records';
import type { RedisClient } from '../core/redis/cluster';
import type { Keyspace } from '../core/redis/keyspace';
import type { TrackedRecord } from '../core/records/types';
import { compileRules } from '../core/rules/compile';
import type { DestinationRules } from '../core/rules/schema';
import type { DestinationService } from './destination-service';

/** Records examined by a preview unless asked otherwise, and at most. */
export const DEFAULT_PREVIEW_RECORDS = 100;
export const MAX_PREVIEW_RECORDS = 1000;

/** One record of a preview: what the rules would do with it. */
export type PreviewRow =
  /** Delivered, as the destination would receive it. */
  | { outcome: 'deliver'; record: TrackedRecord }
  /** Skipped by the filter or the sample; the record as accepted. */
  | { outcome: 'filter' | 'sample'; record: TrackedRecord }
  /** The filter could not be evaluated on it: not delivered, and counted. */
  | { outcome: 'error'; error: string; record: TrackedRecord };

export interface RulesPreview {
  trackerId: string;
  /** The destination whose rules were used, when they were not given. */
  destinationId?: string;
  /** The rules applied; null: none (every record goes as accepted). */
  rules: DestinationRules | null;
  counts: { examined: number; delivered: number; filtered: number; sampled: number; errors: number };
  /** Oldest first. */
  records: PreviewRow[];
}

export interface PreviewInput {
  trackerId: string;
  /** Whose saved rules to use when `rules` is not given. */
  destinationId?: string | undefined;
  /** Rules to try before saving them; checked as saving would check them. */
  rules?: unknown;
  /** Most recent records examined. Default 100, at most 1000. */
  limit?: number | undefined;
}

/**
 * Runs rules over the tracker's last records (as accepted, before any destination's rules) and
 * says what each destination would receive: the same compiled rules the router runs, so a preview
 * shows what delivery will do.
 */
export class RulesPreviewer {
  constructor(
    private readonly deps: { destinations: DestinationService; redis: RedisClient; keyspace: Keyspace },
  ) {}

  async preview(input: PreviewInput): Promise<RulesPreview> {
    const { destinations } = this.deps;
    let rules: DestinationRules | undefined;
    if (input.rules !== undefined) rules = destinations.checkRules(input.rules);
    else if (input.destinationId !== undefined) rules = (await destinations.get(input.trackerId, input.destinationId)).rules;
    const partitions = await destinations.partitions(input.trackerId);
    const limit = Math.min(Math.max(1, input.limit ?? DEFAULT_PREVIEW_RECORDS), MAX_PREVIEW_RECORDS);
    const recent = await recentRecords(this.deps.redis, this.deps.keyspace, input.trackerId, partitions, limit);
    const compiled = compileRules(rules ?? {});
    const counts = { examined: recent.length, delivered: 0, filtered: 0, sampled: 0, errors: 0 };
    const records = recent.map((record): PreviewRow => {
      const verdict = compiled.apply(record);
      if (verdict.kind === 'deliver') {
        counts.delivered++;
        return { outcome: 'deliver', record: verdict.record };
      }
      if (verdict.kind === 'skip') {
        counts[verdict.rule === 'filter' ? 'filtered' : 'sampled']++;
        return { outcome: verdict.rule, record };
      }
      counts.errors++;
      return { outcome: 'error', error: verdict.message, record };
    });
    return { trackerId: input.trackerId, ...(input.rules === undefined && input.destinationId !== undefined ? { destinationId: input.destinationId } : {}), rules: rules ?? null, counts, records };
  }
}
