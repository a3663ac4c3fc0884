import * as z from 'zod';
import type { ConnectorError } from '../../connectors/errors';
import type { Connector, DestinationWriter, RecordOutcome, WriteOptions } from '../../connectors/types';
import type { TrackedRecord } from '../../src/core/records/types';

/** What a memory destination holds, and the faults a test can switch on. */
export interface MemoryDestination {
  events: Map<string, TrackedRecord>;
  users: Map<string, Record<string, unknown>>;
  writes: number;
  /** Thrown by the next write(s) for the whole batch, then removed. */
  failNext: ConnectorError[];
  /** Per record id: the outcome to answer instead of writing. */
  recordFaults: Map<string, (attempt: number) => RecordOutcome | undefined>;
  attempts: Map<string, number>;
  /** Every record written, in the order written (repeats kept). */
  written: TrackedRecord[];
  /** Held open while set: lets a test observe a write in progress. */
  gate: Promise<void> | undefined;
  /**
   * Hung writes to answer, in order: `abortable` never answers but stops when its signal aborts
   * (a hung request whose abort still works); `deaf` never settles at all (a wedged library).
   */
  hangNext: Array<'abortable' | 'deaf'>;
  /** The options of every write, in call order. */
  writeOptions: Array<WriteOptions | undefined>;
  /** Writers opened for this destination so far. */
  opened: number;
  /** Records in each write, in call order. */
  sizes: number[];
}

export const memoryDestinations = new Map<string, MemoryDestination>();

export function memoryDestination(name: string): MemoryDestination {
  let d = memoryDestinations.get(name);
  if (!d) {
    d = { events: new Map(), users: new Map(), writes: 0, failNext: [], recordFaults: new Map(), attempts: new Map(), written: [], gate: undefined, hangNext: [], writeOptions: [], opened: 0, sizes: [] };
    memoryDestinations.set(name, d);
  }
  return d;
}

/** A destination in test memory: events keyed by id (idempotent), users merged by `_uid` with null clearing. */
export function createMemoryConnector(batch = { maxRecords: 100, maxAgeMs: 20 }): Connector<{ name: string; batchRecords?: number }> {
  return {
    type: 'memory',
    description: 'in-memory test destination',
    settingsSchema: z.object({ name: z.string().min(1), batchRecords: z.number().int().min(1).optional() }),
    batch,
    batchFor: (settings) => (settings.batchRecords ? { ...batch, maxRecords: settings.batchRecords } : batch),
    async open(ctx): Promise<DestinationWriter> {
      const dest = memoryDestination(ctx.settings.name);
      dest.opened++;
      return {
        async write(records, signal, options): Promise<RecordOutcome[]> {
          dest.writeOptions.push(options);
          dest.sizes.push(records.length);
          const hang = dest.hangNext.shift();
          if (hang === 'deaf') return new Promise<never>(() => undefined);
          if (hang === 'abortable') return new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
          if (dest.gate) await dest.gate;
          dest.writes++;
          const fault = dest.failNext.shift();
          if (fault) throw fault;
          return records.map((r) => {
            const attempt = (dest.attempts.get(r.id) ?? 0) + 1;
            dest.attempts.set(r.id, attempt);
            const injected = dest.recordFaults.get(r.id)?.(attempt);
            if (injected) return injected;
            dest.written.push(r);
            if (r.kind === 'event') dest.events.set(r.id, r);
            else if (r.kind === 'user') {
              const row = dest.users.get(r.uid!) ?? {};
              for (const [k, v] of Object.entries(r.properties)) {
                if (v === null) delete row[k];
                else row[k] = v;
              }
              dest.users.set(r.uid!, row);
            }
            return { status: 'ok' };
          });
        },
        async test() {
          return { notes: [`memory destination ${ctx.settings.name}`] };
        },
        details: () => ({ events: dest.events.size, users: dest.users.size }),
        async close() {},
      };
    },
  };
}
