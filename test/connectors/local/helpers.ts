import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localConnector, queryWarehouse, type LocalSettings } from '../../../connectors/local';
import type { DestinationWriter, RecordOutcome, WriteOptions } from '../../../connectors/types';
import { createLogger } from '../../../src/core/logger';
import type { JsonValue, TrackedRecord } from '../../../src/core/records/types';

export { event, json, props, session, user } from '../../helpers/record-builders';

export const TRACKER = 'trk';

export interface LocalFixture {
  dataDir: string;
  /** The warehouse file of TRACKER with default settings. */
  file: string;
  writer: DestinationWriter;
  /** Without options the writer is not told whether the records may be stored already. */
  write: (records: TrackedRecord[], options?: WriteOptions) => Promise<RecordOutcome[]>;
  /** Rows of a query as objects, through the read-only helper. */
  rows: (sql: string) => Promise<Array<Record<string, JsonValue>>>;
  cleanup: () => Promise<void>;
}

/** `dataDir`: open the warehouse of an earlier fixture's directory again. */
export async function openFixture(settings: LocalSettings = {}, dataDir?: string): Promise<LocalFixture> {
  dataDir ??= await mkdtemp(path.join(os.tmpdir(), 'tributary-local-'));
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
    write: (records, options) => writer.write(records, new AbortController().signal, options),
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

export const allOk = (outcomes: RecordOutcome[]) => outcomes.every((o) => o.status === 'ok');
