import { postgresConnector, type PostgresSettings } from '../../../connectors/postgres';
import type { DestinationWriter, RecordOutcome } from '../../../connectors/types';
import { createLogger } from '../../../src/core/logger';
import { parseExactJson } from '../../../src/core/records/exact-json';
import type { TrackedRecord } from '../../../src/core/records/types';
import { asAdmin, createTestDatabase, type TestDatabase } from '../../helpers/postgres';

export { event, props, session, user } from '../../helpers/record-builders';

/** The columns every table has before its property columns. */
const FIXED = new Set(['_id', '_uid', '_sid', '_event', '_event_at', '_received_at', '_context', '_properties']);

/** A writer on a schema of its own in the test file's database, and ways to look at what it wrote. */
export interface PgFixture {
  schema: string;
  writer: DestinationWriter;
  write(records: TrackedRecord[]): Promise<RecordOutcome[]>;
  /** Another writer of the same schema: what a second partition of the tracker runs. */
  open(settings?: Partial<PostgresSettings>): Promise<DestinationWriter>;
  /** Rows of a table, every number exact (pg's own parsing rounds beyond 2^53), ordered by `order`. */
  rows(table: string, order?: string): Promise<Array<Record<string, unknown>>>;
  /** Property columns of a table → their type as `information_schema` names it, in table order. */
  columns(table: string): Promise<Record<string, string>>;
  /** Runs SQL as the server's superuser in the test database. */
  admin(sql: string): Promise<void>;
  /** Rows of a query as the superuser, as pg parses them (read numbers beyond 2^53 as `::text`). */
  query(sql: string): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

/** One database (and least-privilege role) per test file; one schema per fixture. */
export function usePostgres(label: string): { db: () => TestDatabase; fixture: (settings?: Partial<PostgresSettings>) => Promise<PgFixture> } {
  let db: TestDatabase | undefined;
  let n = 0;
  const open: PgFixture[] = [];
  beforeAll(async () => {
    db = await createTestDatabase(label);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((f) => f.close()));
  });
  afterAll(async () => {
    await db?.drop();
  });
  const current = () => {
    if (!db) throw new Error('the test database is made in beforeAll');
    return db;
  };

  async function fixture(settings: Partial<PostgresSettings> = {}): Promise<PgFixture> {
    const database = current();
    const schema = `${label}_${++n}`;
    const writers: DestinationWriter[] = [];
    const openWriter = async (more: Partial<PostgresSettings> = {}) => {
      const w = await postgresConnector.open({
        trackerId: 'trk',
        destinationId: 'pg',
        settings: postgresConnector.settingsSchema.parse({ ...database.settings, schema, ...settings, ...more }),
        dataDir: '/nonexistent',
        logger: createLogger('silent'),
        now: () => new Date(),
      });
      writers.push(w);
      return w;
    };
    const writer = await openWriter();
    const asDb = <T>(fn: Parameters<typeof asAdmin<T>>[0]) => asAdmin(fn, database.name);
    const f: PgFixture = {
      schema,
      writer,
      write: (records) => writer.write(records, new AbortController().signal),
      open: openWriter,
      rows: (table, order = '_id') =>
        asDb(async (c) => {
          const { rows } = await c.query<{ j: string }>(`SELECT to_jsonb(tributary_row)::text AS j FROM "${schema}"."${table}" tributary_row ORDER BY ${order}`);
          return rows.map((r) => parseExactJson(r.j) as Record<string, unknown>);
        }),
      columns: (table) =>
        asDb(async (c) => {
          const { rows } = await c.query<{ name: string; type: string }>(
            `SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
            [schema, table],
          );
          return Object.fromEntries(rows.filter((r) => !FIXED.has(r.name)).map((r) => [r.name, r.type]));
        }),
      admin: (sql) => asDb(async (c) => void (await c.query(sql))),
      query: (sql) => asDb(async (c) => (await c.query(sql)).rows as Array<Record<string, unknown>>),
      close: async () => {
        await Promise.all(writers.splice(0).map((w) => w.close()));
      },
    };
    open.push(f);
    return f;
  }

  return { db: current, fixture };
}

export const allOk = (outcomes: RecordOutcome[]): boolean => outcomes.every((o) => o.status === 'ok');
