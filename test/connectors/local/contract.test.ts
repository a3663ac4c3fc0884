import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RetryableError } from '../../../connectors/errors';
import { localConnector, queryWarehouse, WarehouseMissingError } from '../../../connectors/local';
import type { DestinationWriter } from '../../../connectors/types';
import { createLogger } from '../../../src/core/logger';
import type { RecordKind } from '../../../src/core/records/types';
import { describeConnectorContract, storedRow, type ContractDestination } from '../contract/suite';

const repoRoot = path.resolve(__dirname, '../../..');
const TABLE: Readonly<Record<RecordKind, string>> = { user: 'users', session: 'sessions', event: 'events' };

/** Another process that opens the warehouse for writing and keeps it, as a second worker would. */
async function holdFile(file: string): Promise<ChildProcess> {
  const script = `require('@duckdb/node-api').DuckDBInstance.create(${JSON.stringify(file)}).then(() => { process.stdout.write('ready\\n'); setInterval(() => {}, 1000); }, (e) => { console.error(e.message); process.exit(1); });`;
  const child = spawn(process.execPath, ['-e', script], { cwd: repoRoot });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`lock holder exited with ${code}`)));
  });
  return child;
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * An embedded destination has no wire on which an answer could be lost: the equivalent is the
 * process stopping right after the commit, so the batch was stored and the loop never heard so.
 */
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

async function openLocal(): Promise<ContractDestination> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tributary-contract-'));
  const file = path.join(dataDir, 'warehouse', 'trk.duckdb');
  const dir = path.dirname(file);
  const open = () => localConnector.open({ trackerId: 'trk', destinationId: 'local', settings: {}, dataDir, logger: createLogger('silent'), now: () => new Date() });
  const armed = { lose: false };
  let writer = await open();
  let holder: ChildProcess | undefined;
  let denied = false;
  // A reader makes this process's writer close the file (file-handoff.ts), as `tributary query` does.
  const releaseFile = () => queryWarehouse(file, 'SELECT 1');

  return {
    get writer() {
      return losingAnswers(writer, armed);
    },
    async reopen() {
      await writer.close();
      writer = await open();
    },
    async rows(kind) {
      try {
        const result = await queryWarehouse(file, `SELECT to_json(t)::VARCHAR FROM ${TABLE[kind]} AS t`);
        return result.rows.map(([text]) => storedRow(JSON.parse(String(text)) as Record<string, unknown>));
      } catch (err) {
        if (err instanceof WarehouseMissingError) return [];
        throw err;
      }
    },
    loseAnswer() {
      armed.lose = true;
    },
    async failTransiently() {
      await releaseFile();
      holder = await holdFile(file);
    },
    async denyAccess() {
      await releaseFile();
      // A file where the directory was: unwritable even for root, unlike chmod.
      await rename(dir, `${dir}.away`);
      await writeFile(dir, 'not a directory');
      denied = true;
    },
    refuse(events) {
      return events.map((e) => ({ ...e, eventAt: 'not a time' }));
    },
    async clearFaults() {
      armed.lose = false;
      await stop(holder);
      holder = undefined;
      if (denied) {
        await rm(dir);
        await rename(`${dir}.away`, dir);
        denied = false;
      }
    },
    async close() {
      await stop(holder);
      await writer.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

describeConnectorContract('local', { transientFaults: ['warehouse file held by another process'], open: openLocal });
