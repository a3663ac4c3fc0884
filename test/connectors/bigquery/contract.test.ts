import type { RecordKind } from '../../../src/core/records/types';
import { startBigQueryFake, type BigQueryFake } from '../../fakes/bigquery';
import { describeConnectorContract, storedRow, type ContractDestination } from '../contract/suite';
import { openWriter, type Fixture } from './helpers';

// The client's transport on Node's fetch under jest: see test/fakes/bigquery/jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('../../fakes/bigquery/jest-transport')>('../../fakes/bigquery/jest-transport').teenyRequestOnNativeFetch());

const TABLE: Readonly<Record<RecordKind, string>> = { user: 'users', session: 'sessions', event: 'events' };

let fake: BigQueryFake;

const TRANSIENT: Readonly<Record<string, () => void>> = {
  '403 rateLimitExceeded': () => void fake.faults.rateLimit('tabledata.insertAll'),
  '503 backendError': () => void fake.faults.backendError('tabledata.insertAll'),
};

/** A dataset of its own per destination, in one fake for the file. */
async function openBigQuery(): Promise<ContractDestination> {
  let fx: Fixture = await openWriter(fake);
  const dataset = fx.dataset;
  return {
    get writer() {
      return fx.writer;
    },
    async reopen() {
      await fx.close();
      fx = await openWriter(fake, { dataset });
    },
    async rows(kind) {
      if (!fake.table(fx.settings.projectId, dataset, TABLE[kind])) return [];
      return (await fx.query(`SELECT * FROM \`@@.${TABLE[kind]}\``)).map(storedRow);
    },
    // Events are streamed (insertAll); users and sessions are written by one MERGE per table.
    loseAnswer(kind) {
      if (kind === 'event') fake.faults.inject('tabledata.insertAll', { kind: 'lose-response' });
      else fake.faults.inject('jobs.query', { kind: 'lose-response' }, { when: (c) => String(c.body.query).startsWith(`MERGE INTO \`${fx.settings.projectId}\`.\`${dataset}\`.\`${TABLE[kind]}\``) });
    },
    failTransiently: (fault) => TRANSIENT[fault]!(),
    denyAccess() {
      const message = `Access Denied: Dataset ${fx.settings.projectId}:${dataset}: Permission bigquery.tables.updateData denied (or it may not exist).`;
      fake.faults.inject('*', { kind: 'error', status: 403, reason: 'accessDenied', message }, { times: Infinity });
    },
    refuse(events) {
      fake.faults.inject('tabledata.insertAll', { kind: 'error', status: 400, reason: 'invalid', message: 'Invalid request: rows refused' });
      return events;
    },
    clearFaults: () => fake.faults.clear(),
    async close() {
      fake.faults.clear();
      await fx.close();
    },
  };
}

describeConnectorContract('bigquery', {
  transientFaults: Object.keys(TRANSIENT),
  async setup() {
    // No insertId deduplication: it is best effort and lasts about a minute, while a re-send may
    // come hours later, so exactly once must not depend on it.
    fake = await startBigQueryFake({ dedupWindowMs: 0 });
  },
  teardown: () => fake.close(),
  open: openBigQuery,
});
