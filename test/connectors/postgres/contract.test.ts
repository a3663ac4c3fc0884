import { Client } from 'pg';
import { RetryableError } from '../../../connectors/errors';
import { postgresConnector } from '../../../connectors/postgres';
import type { DestinationWriter } from '../../../connectors/types';
import { parseExactJson } from '../../../src/core/records/exact-json';
import { createLogger } from '../../../src/core/logger';
import type { RecordKind } from '../../../src/core/records/types';
import { asAdmin, createTestDatabase, TEST_PG, type TestDatabase } from '../../helpers/postgres';
import { describeConnectorContract, storedRow, type ContractDestination } from '../contract/suite';

const TABLE: Readonly<Record<RecordKind, string>> = { user: 'users', session: 'sessions', event: 'events' };

/** The answer of a committed write never arrives: the connection drops right after the commit. */
function losingAnswers(writer: DestinationWriter, armed: { lose: boolean }): DestinationWriter {
  return {
    ...writer,
    write: async (records, signal, options) => {
      const outcomes = await writer.write(records, signal, options);
      if (!armed.lose) return outcomes;
      armed.lose = false;
      throw new RetryableError('the answer was lost after the commit', { reason: 'no-response' });
    },
  };
}

let db: TestDatabase;
let n = 0;

async function openPostgres(): Promise<ContractDestination> {
  const schema = `contract_${++n}`;
  const settings = { ...db.settings, schema, statementTimeoutMs: 1500 };
  const open = () => postgresConnector.open({ trackerId: 'trk', destinationId: 'pg', settings, dataDir: '/nonexistent', logger: createLogger('silent'), now: () => new Date() });
  const armed = { lose: false };
  let writer = await open();
  /** A transaction holding the events table, so that writes wait past statementTimeoutMs. */
  let locker: Client | undefined;
  let denied = false;

  const destination: ContractDestination = {
    get writer() {
      return losingAnswers(writer, armed);
    },
    async reopen() {
      await writer.close();
      writer = await open();
    },
    async rows(kind) {
      return asAdmin(async (c) => {
        const exists = await c.query(`SELECT to_regclass($1) AS t`, [`"${schema}"."${TABLE[kind]}"`]);
        if (exists.rows[0].t === null) return [];
        // As text and parsed keeping every digit: pg's own parsing would round numbers past 2^53.
        const { rows } = await c.query<{ j: string }>(`SELECT to_jsonb(t)::text AS j FROM "${schema}"."${TABLE[kind]}" t`);
        return rows.map((r) => storedRow(parseExactJson(r.j) as Record<string, unknown>));
      }, db.name);
    },
    loseAnswer() {
      armed.lose = true;
    },
    async failTransiently() {
      locker = new Client({ ...TEST_PG, database: db.name });
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${schema}".events IN ACCESS EXCLUSIVE MODE`);
    },
    async denyAccess() {
      await asAdmin(async (c) => {
        await c.query(`ALTER ROLE "${db.role}" NOLOGIN`);
        await c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [db.role]);
      });
      denied = true;
    },
    refuse(events) {
      // Not a time PostgreSQL can read: COPY refuses the record (SQLSTATE 22007).
      return events.map((e) => ({ ...e, eventAt: 'not a time' }));
    },
    async clearFaults() {
      armed.lose = false;
      if (locker) {
        await locker.query('ROLLBACK').catch(() => undefined);
        await locker.end();
        locker = undefined;
      }
      if (denied) {
        await asAdmin((c) => c.query(`ALTER ROLE "${db.role}" LOGIN`));
        denied = false;
      }
    },
    async close() {
      await destination.clearFaults();
      await writer.close();
    },
  };
  return destination;
}

describeConnectorContract('postgres', {
  transientFaults: ['statement timeout (the table locked by another transaction)'],
  async setup() {
    db = await createTestDatabase('contract');
  },
  async teardown() {
    await db.drop();
  },
  open: openPostgres,
});
