import type { ConnectorRegistry } from '../../connectors/registry';
import { ConnectorError } from '../../connectors/errors';
import type { SetupGuide } from '../../connectors/types';
import type { Logger } from '../core/logger';
import type { TrackerStore } from '../core/trackers/store';
import { DestinationSchema, describeIssues, type Destination, type Tracker } from '../core/trackers/types';
import { DestinationRulesSchema, hasRules, type DestinationRules } from '../core/rules/schema';
import { forgetKeyFile, keyFilePath } from './key-files';

export type DestinationServiceErrorCode = 'TRACKER_NOT_FOUND' | 'DESTINATION_NOT_FOUND' | 'DESTINATION_EXISTS' | 'UNKNOWN_TYPE' | 'INVALID_SETTINGS' | 'INVALID_RULES';

export class DestinationServiceError extends Error {
  override name = 'DestinationServiceError';
  constructor(
    readonly code: DestinationServiceErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export interface AddDestinationInput {
  type: string;
  /** Default: the type, made unique within the tracker (`local`, `local-2`…). */
  id?: string;
  settings?: Record<string, unknown>;
  enabled?: boolean;
  /** Which records it receives and in what shape (src/core/rules); none: every record as accepted. */
  rules?: unknown;
}

/** What an update changes; what it leaves out stays. */
export interface DestinationChanges {
  /** Replaces the settings as a whole. */
  settings?: Record<string, unknown> | undefined;
  enabled?: boolean | undefined;
  /** Replaces the rules as a whole; null removes them. */
  rules?: unknown;
}

export interface TestResult {
  ok: boolean;
  /** What the connector wants the operator to know (e.g. the id of a spreadsheet it created). */
  notes?: string[];
  /** What failed, in the destination's own words; absent when ok. */
  error?: { kind: string; message: string };
}

/**
 * Destinations of a tracker: added, listed, enabled or disabled, removed, and tested. Settings are
 * checked by the connector's own schema here, so a bad setting is refused when saved, by name.
 */
export class DestinationService {
  constructor(
    private readonly store: TrackerStore,
    private readonly registry: ConnectorRegistry,
    private readonly dataDir: string,
    /** The connectors' logger, or a function that makes it when a connector first opens (the CLI's: see cli/context.ts). */
    private readonly logger: Logger | (() => Logger),
  ) {}

  /** The tracker, or TRACKER_NOT_FOUND. */
  async tracker(trackerId: string): Promise<Tracker> {
    const tracker = await this.store.get(trackerId);
    if (!tracker) throw new DestinationServiceError('TRACKER_NOT_FOUND', `No tracker with id ${trackerId}.`);
    return tracker;
  }

  private checkSettings(type: string, settings: Record<string, unknown>): Record<string, unknown> {
    const connector = this.registry.get(type);
    if (!connector) throw new DestinationServiceError('UNKNOWN_TYPE', `Unknown destination type "${type}"; known types: ${this.registry.types().join(', ')}.`, 'type');
    const parsed = connector.settingsSchema.safeParse(settings);
    if (!parsed.success) throw new DestinationServiceError('INVALID_SETTINGS', `Invalid ${type} settings: ${describeIssues(parsed.error, 'settings')}`, `settings.${parsed.error.issues[0]?.path.join('.') ?? ''}`);
    // As parsed: what people paste is stored as what it means (a spreadsheet's address as its id).
    return parsed.data as Record<string, unknown>;
  }

  /** Rules checked whole, or refused naming the rule and, for a filter, the column where it goes wrong. */
  checkRules(rules: unknown): DestinationRules | undefined {
    if (rules === undefined || rules === null) return undefined;
    const parsed = DestinationRulesSchema.safeParse(rules);
    if (!parsed.success) throw new DestinationServiceError('INVALID_RULES', `Invalid rules: ${describeIssues(parsed.error, 'rules')}`, `rules.${parsed.error.issues[0]?.path.join('.') ?? ''}`);
    return hasRules(parsed.data) ? parsed.data : undefined;
  }

  /** The tracker's partition count: each destination is delivered partition by partition. */
  async partitions(trackerId: string): Promise<number> {
    return (await this.tracker(trackerId)).partitions;
  }

  async list(trackerId: string): Promise<Destination[]> {
    return (await this.tracker(trackerId)).destinations;
  }

  async get(trackerId: string, destinationId: string): Promise<Destination> {
    const found = (await this.list(trackerId)).find((d) => d.id === destinationId);
    if (!found) throw new DestinationServiceError('DESTINATION_NOT_FOUND', `Tracker ${trackerId} has no destination ${destinationId}.`);
    return found;
  }

  async add(trackerId: string, input: AddDestinationInput): Promise<Destination> {
    const tracker = await this.tracker(trackerId);
    const settings = this.checkSettings(input.type, input.settings ?? {});
    const rules = this.checkRules(input.rules);
    if (this.registry.get(input.type)?.singleWriter && tracker.partitions > 1) {
      throw new DestinationServiceError('INVALID_SETTINGS', `A ${input.type} destination takes one writer at a time, and tracker ${trackerId} has ${tracker.partitions} partitions delivered in parallel: set its partitions to 1 first, or choose another type.`, 'type');
    }
    let added: Destination | undefined;
    await this.store.update(tracker.id, (current) => {
      const taken = new Set(current.destinations.map((d) => d.id));
      let id = input.id ?? input.type;
      if (input.id && taken.has(id)) throw new DestinationServiceError('DESTINATION_EXISTS', `Tracker ${trackerId} already has a destination ${id}.`, 'id');
      for (let n = 2; taken.has(id); n++) id = `${input.type}-${n}`;
      const parsed = DestinationSchema.safeParse({ id, type: input.type, enabled: input.enabled ?? true, settings, ...(rules ? { rules } : {}) });
      if (!parsed.success) throw new DestinationServiceError('INVALID_SETTINGS', describeIssues(parsed.error), parsed.error.issues[0]?.path.join('.'));
      added = parsed.data;
      return { ...current, destinations: [...current.destinations, parsed.data] };
    });
    return added!;
  }

  async update(trackerId: string, destinationId: string, changes: DestinationChanges): Promise<Destination> {
    const current = await this.get(trackerId, destinationId);
    const next: Destination = {
      ...current,
      settings: changes.settings ? this.checkSettings(current.type, changes.settings) : current.settings,
      enabled: changes.enabled ?? current.enabled,
    };
    if (changes.rules !== undefined) {
      const rules = this.checkRules(changes.rules);
      if (rules) next.rules = rules;
      else delete next.rules;
    }
    await this.store.update(trackerId, (t) => {
      if (!t.destinations.some((d) => d.id === destinationId)) throw new DestinationServiceError('DESTINATION_NOT_FOUND', `Tracker ${trackerId} has no destination ${destinationId}.`);
      return { ...t, destinations: t.destinations.map((d) => (d.id === destinationId ? next : d)) };
    });
    // A key an earlier version kept as a file, replaced by these settings: its file goes.
    if (next.settings.keyFile !== keyFilePath(this.dataDir, trackerId, destinationId)) forgetKeyFile(this.dataDir, trackerId, destinationId);
    return next;
  }

  async remove(trackerId: string, destinationId: string): Promise<void> {
    await this.get(trackerId, destinationId);
    await this.store.update(trackerId, (t) => {
      if (!t.destinations.some((d) => d.id === destinationId)) throw new DestinationServiceError('DESTINATION_NOT_FOUND', `Tracker ${trackerId} has no destination ${destinationId}.`);
      return { ...t, destinations: t.destinations.filter((d) => d.id !== destinationId) };
    });
    forgetKeyFile(this.dataDir, trackerId, destinationId);
  }

  /** The first setup a destination type guides, if it has one (connectors/types.ts). */
  setupGuide(type: string): SetupGuide | undefined {
    return this.registry.get(type)?.setup;
  }

  /** A harmless round trip through the connector (e.g. make sure the tables exist). */
  async test(trackerId: string, destinationId: string, timeoutMs = 30_000): Promise<TestResult> {
    const destination = await this.get(trackerId, destinationId);
    return this.tryConnector(trackerId, destination.id, destination.type, destination.settings, timeoutMs);
  }

  /**
   * The same test on settings not saved yet (the console's "Test" before "Add"): checked as saving
   * checks them, then the connector's round trip. A refusal of the settings is a failed test, not
   * an error, so the form shows it where it shows the connector's. Nothing is stored.
   */
  async testSettings(trackerId: string, input: { type: string; id?: string | undefined; settings: Record<string, unknown> }, timeoutMs = 30_000): Promise<TestResult> {
    await this.tracker(trackerId);
    return this.tryConnector(trackerId, input.id ?? input.type, input.type, input.settings, timeoutMs);
  }

  private async tryConnector(trackerId: string, destinationId: string, type: string, raw: Record<string, unknown>, timeoutMs: number): Promise<TestResult> {
    const connector = this.registry.get(type);
    if (!connector) return { ok: false, error: { kind: 'configuration', message: `Unknown destination type "${type}".` } };
    const settings = connector.settingsSchema.safeParse(raw);
    if (!settings.success) return { ok: false, error: { kind: 'configuration', message: describeIssues(settings.error, 'settings') } };
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const writer = await connector.open({ trackerId, destinationId, settings: settings.data, dataDir: this.dataDir, logger: typeof this.logger === 'function' ? this.logger() : this.logger, now: () => new Date() });
      let report;
      try {
        report = await writer.test(signal);
      } finally {
        await writer.close();
      }
      return report && report.notes.length > 0 ? { ok: true, notes: report.notes } : { ok: true };
    } catch (err) {
      const kind = err instanceof ConnectorError ? err.kind : 'error';
      return { ok: false, error: { kind, message: (err as Error).message } };
    }
  }
}
