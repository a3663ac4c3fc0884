import type { DestinationWriter } from '../../../connectors/types';
import type { RecordKind } from '../../../src/core/records/types';
import { describeConnectorContract, storedRow, type ContractDestination } from '../contract/suite';
import { rowsOf, startHarness } from './harness';

/** One events tab, so that every event is found in one place whatever its month. */
const SETTINGS = { rollover: 'none' } as const;
const TAB: Readonly<Record<RecordKind, string>> = { user: 'users', session: 'sessions', event: 'events' };
const TRANSIENT: Readonly<Record<string, 429 | 503>> = { '429 RESOURCE_EXHAUSTED': 429, '503 UNAVAILABLE': 503 };

/** A fake of its own per destination; every fault is armed on values.batchUpdate, the request that stores new rows. */
async function openSheets(): Promise<ContractDestination> {
  const h = await startHarness();
  let writer: DestinationWriter = await h.open(SETTINGS);
  return {
    get writer() {
      return writer;
    },
    async reopen() {
      await writer.close();
      writer = await h.open(SETTINGS);
    },
    async rows(kind) {
      if (!h.fake.spreadsheets.get(h.spreadsheetId)!.sheetByTitle(TAB[kind])) return [];
      return rowsOf(h.tab(TAB[kind])).map(storedRow);
    },
    // New users, sessions and events are all appended; an existing key's row is updated in place.
    loseAnswer: () => h.fake.faults.add({ kind: 'lose-response' }, { method: 'values.batchUpdate' }),
    failTransiently: (fault) => h.fake.faults.add({ kind: 'status', status: TRANSIENT[fault]! }, { method: 'values.batchUpdate' }),
    denyAccess: () => void h.fake.denied.add('anonymous'),
    refuse(events) {
      h.fake.faults.add({ kind: 'status', status: 400 }, { method: 'values.batchUpdate' });
      return events;
    },
    clearFaults() {
      h.fake.faults.clear();
      h.fake.denied.clear();
    },
    close: () => h.close(),
  };
}

describeConnectorContract('google-sheets', { transientFaults: Object.keys(TRANSIENT), open: openSheets });
