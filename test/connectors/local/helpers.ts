import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localConnector, queryWarehouse, type LocalSettings } from '../../../connectors/local';
import type { DestinationWriter, RecordOutcome } from '../../../connectors/types';
import { createLogger } from '../../../src/core/logger';
import type { JsonValue, Properties, RequestContext, TrackedRecord } from '../../../src/core/records/types';

export const TRACKER = 'trk';

export interface LocalFixture {
  dataDir: string;
  /** The warehouse file of TRACKER with default settings. */
  file: string;
  writer: DestinationWriter;
  write: (records: TrackedRecord[]) => Promise<RecordOutcome[]>;
  /** Rows of a query as objects, through the read-only helper. */
  rows: (sql: string) => Promise<Array<Record<string, JsonValue>>>;
  cleanup: () => Promise<void>;
}

export async function openFixture(settings: LocalSettings = {}): Promise<LocalFixture> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tributary-local-'));
  const writer = await localConnector.open({
    trackerId: TRACKER,
    destinationId: 'local',
    settings: localConnector.settingsSchema.parse(settings),
    dataDir,
    logger: createLogger('silent'),
    now: () => new Date(),
  });
  const file = path.join(dataDir, 'warehouse', `${TRACKER}.duckdb`);
  return {
    dataDir,
    file,
    writer,
    write: (records) => writer.write(records, new AbortController().signal),
    rows: async (sql) => {
      const result = await queryWarehouse(file, sql);
      return result.rows.map((row) => Object.fromEntries(result.columns.map((c, i) => [c, row[i] as JsonValue])));
    },
    cleanup: async () => {
      await writer.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export const props = (o: Record<string, JsonValue>): Properties => {
  const p = Object.create(null) as Properties;
  for (const [k, v] of Object.entries(o)) p[k] = v;
  return p;
};

let seq = 0;
const nextId = () => `0190a000-0000-7000-8000-${(++seq).toString(16).padStart(12, '0')}`;
const at = () => new Date(Date.UTC(2026, 0, 1) + seq * 1000).toISOString();

export const user = (uid: string, p: Record<string, JsonValue>, context?: RequestContext): TrackedRecord => ({
  kind: 'user',
  id: nextId(),
  receivedAt: at(),
  uid,
  properties: props(p),
  ...(context ? { context } : {}),
});

export const session = (sid: string, p: Record<string, JsonValue>, uid?: string): TrackedRecord => ({
  kind: 'session',
  id: nextId(),
  receivedAt: at(),
  sid,
  ...(uid === undefined ? {} : { uid }),
  properties: props(p),
});

export const event = (name: string, p: Record<string, JsonValue>, extra: Partial<TrackedRecord> = {}): TrackedRecord => {
  const time = at();
  return { kind: 'event', id: nextId(), receivedAt: time, eventAt: time, event: name, properties: props(p), ...extra };
};

/** `_properties` and JSON columns come back as JSON text. */
export const json = (value: JsonValue | undefined): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

export const allOk = (outcomes: RecordOutcome[]) => outcomes.every((o) => o.status === 'ok');
