import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createGoogleSheetsConnector, type GoogleSheetsSettings, type SheetsWriter } from '../../../connectors/google-sheets';
import type { RecordOutcome } from '../../../connectors/types';
import { createLogger } from '../../../src/core/logger';
import type { Properties, TrackedRecord } from '../../../src/core/records/types';
import { ManualClock, SheetsFake, type SheetsFakeOptions } from '../../fakes/sheets';

/** A fake, a spreadsheet in it, and writers driven by the fake's clock: waiting advances it. */
export interface Harness {
  fake: SheetsFake;
  clock: ManualClock;
  spreadsheetId: string;
  dataDir: string;
  open: (settings?: Partial<GoogleSheetsSettings>) => Promise<SheetsWriter>;
  /** Writes through a fresh signal; returns the outcomes. */
  write: (writer: SheetsWriter, records: TrackedRecord[]) => Promise<RecordOutcome[]>;
  /** Every value of a tab (numbers and booleans as such). */
  tab: (title: string) => unknown[][];
  close: () => Promise<void>;
}

export async function startHarness(fakeOptions: SheetsFakeOptions = {}, clock = new ManualClock()): Promise<Harness> {
  const fake = await SheetsFake.start({ clock: clock.now, ...fakeOptions });
  const spreadsheetId = fake.createSpreadsheet('Tributary test', ['Sheet1']).id;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sheets-'));
  const connector = createGoogleSheetsConnector({ now: clock.now, sleep: async (ms) => clock.advance(ms) });
  const writers: SheetsWriter[] = [];
  return {
    fake,
    clock,
    spreadsheetId,
    dataDir,
    open: async (settings = {}) => {
      const parsed = connector.settingsSchema.parse({ spreadsheetId, endpoint: fake.url, requestTimeoutMs: 2000, ...settings });
      const writer = (await connector.open({ trackerId: 'shop', destinationId: 'sheets', settings: parsed, dataDir, logger: createLogger('silent'), now: () => new Date(clock.now()) })) as SheetsWriter;
      writers.push(writer);
      return writer;
    },
    write: (writer, records) => writer.write(records, new AbortController().signal),
    tab: (title) => fake.values(spreadsheetId, title),
    close: async () => {
      await Promise.all(writers.map((w) => w.close()));
      await fake.close();
    },
  };
}

let seq = 0;
const props = (p: Record<string, unknown>) => Object.assign(Object.create(null) as Properties, p);

export function event(clock: ManualClock, properties: Record<string, unknown> = {}, fields: Partial<TrackedRecord> = {}): TrackedRecord {
  const at = new Date(clock.now()).toISOString();
  return { kind: 'event', id: `${String(++seq).padStart(8, '0')}-${randomUUID().slice(9)}`, receivedAt: at, eventAt: at, event: 'view', properties: props(properties), ...fields };
}

export function user(clock: ManualClock, uid: string, properties: Record<string, unknown>): TrackedRecord {
  return { kind: 'user', id: randomUUID(), receivedAt: new Date(clock.now()).toISOString(), uid, properties: props(properties) };
}

export function session(clock: ManualClock, sid: string, properties: Record<string, unknown>, uid?: string): TrackedRecord {
  return { kind: 'session', id: randomUUID(), receivedAt: new Date(clock.now()).toISOString(), sid, ...(uid ? { uid } : {}), properties: props(properties) };
}

/** Rows of a tab as objects keyed by its header (row 1); blank cells left out. */
export function rowsOf(values: unknown[][]): Array<Record<string, unknown>> {
  const [header = [], ...rows] = values;
  return rows.map((row) => Object.fromEntries(header.map((h, i) => [String(h), row[i]]).filter(([, v]) => v !== undefined && v !== '')));
}

export const OK = { status: 'ok' };
