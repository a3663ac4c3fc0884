import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { ConfigurationError, RetryableError } from '../errors';
import { errorMessage, toConnectorError } from './duckdb-errors';
import { engineOptions, type EngineLimits } from './engine';
import { withFileMutex } from './file-mutex';
import { announce, announced, MARKER_STALE_MS, waitWhileAnnounced } from './file-handoff';
import { sleep } from '../../src/core/sleep';
import { ensureTables } from './schema';

/** Makes the warehouse directory, or says plainly why it cannot be written. */
export async function prepareDirectory(file: string): Promise<void> {
  const dir = path.dirname(file);
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
  } catch (err) {
    throw new ConfigurationError(`the local warehouse directory ${dir} is not writable: ${errorMessage(err)}`, { reason: 'not-writable', cause: err });
  }
}

/**
 * The writer's DuckDB runs on one thread. A batch is one `INSERT … SELECT … ON CONFLICT` of a few
 * thousand rows, which gains nothing from more; with DuckDB's default (a thread per core) the
 * writer's threads took about 20 µs more CPU a record delivered under `npm start`, CPU the HTTP
 * edge and Redis share on a small host (bench/RESULTS.md). Readers (query.ts) keep the default.
 */
const WRITER_OPTIONS = { threads: '1' };

/**
 * How much WAL the writer lets grow before DuckDB checkpoints: a quarter of its memory limit,
 * between DuckDB's default (16 MB) and 64 MB. Each checkpoint rewrites the table's last, partly
 * filled row group and the index, so fewer of them cost less a record, while what is not yet
 * checkpointed stays in the writer's memory. At the default 128 MiB limit (32 MB), batches of
 * 1 250 typical events cost DuckDB 12.5–12.8 µs of CPU a record against 15.2–17.8 at 16 MB, its
 * memory peaking at 64 MiB against 61; at 64 MB, 11.4 µs and 94 MiB (bench/RESULTS.md).
 */
export function checkpointThresholdMb(memoryMb: number): number {
  return Math.min(64, Math.max(16, Math.floor(memoryMb / 4)));
}

/** How often an open writer looks for a waiting reader or writer while it has no batch. */
const WAITERS_POLL_MS = 200;

/**
 * How long a writer keeps the file while another relay process's writer waits for it: a turn. Each
 * handover checkpoints the file and opens it again (20–500 ms, growing with the file), so turns
 * much shorter than this would spend the writers' time on handovers; a partition waits about
 * this long for its turn (file-handoff.ts).
 */
export const WRITER_TURN_MS = 2_000;

/**
 * How long a writer that finds the file held by another relay process waits for its turn before
 * it reports the file locked (and its batch is retried later): a turn, the holder's batch in hand
 * and its checkpoint, with room to spare.
 */
const TURN_WAIT_MS = 15_000;
const TURN_POLL_MS = 100;

/**
 * How long a writer that let go for a waiting one waits for it to open the file (it tries every
 * TURN_POLL_MS). Bounded well below a marker's staleness, so that the marker of a waiter that died
 * costs a turn a pause of this, not of 30 s.
 */
const HANDOVER_WAIT_MS = 2_000;

interface Open {
  instance: DuckDBInstance;
  conn: DuckDBConnection;
  removeSpill: () => Promise<void>;
  /** When this process opened the file: its turn ends WRITER_TURN_MS later if another writer waits. */
  openedAt: number;
  /** Withdraws this process's holder marker. */
  withdrawHolder: () => Promise<void>;
}

/**
 * The writer's handle on one warehouse file, shared by every destination of this process that
 * writes the file.
 *
 * It stays open between batches and is closed after `releaseAfterIdleMs` without a write, between
 * two batches when a reader announces itself, or after a turn when another relay process's
 * writer waits for the file (file-handoff.ts). Opening and closing per
 * batch was measured and is too slow: closing checkpoints the file, which with the events primary
 * key costs 20 ms on a new file, ~200–500 ms at 100 000–250 000 events, and grows with the table
 * (the same run without the key: 20–60 ms); opening adds 15–30 ms. Throughput fell from ~18 000–28 000
 * to ~2 000–4 300 events/s in batches of 1 000.
 */
export class Warehouse {
  private static readonly shared = new Map<string, Warehouse>();

  /** The first caller's settings hold while the file is shared. */
  static acquire(file: string, releaseAfterIdleMs: number, limits: EngineLimits): Warehouse {
    let warehouse = Warehouse.shared.get(file);
    if (!warehouse) {
      warehouse = new Warehouse(file, releaseAfterIdleMs, limits);
      Warehouse.shared.set(file, warehouse);
    }
    warehouse.refs++;
    return warehouse;
  }

  /** Closes this process's writer of `file`, if open. Call inside `withFileMutex(file, …)`. */
  static async closeIfOpen(file: string): Promise<void> {
    await Warehouse.shared.get(file)?.closeNow();
  }

  private refs = 0;
  private open: Open | undefined;
  private idle: NodeJS.Timeout | undefined;
  private waitersPoll: NodeJS.Timeout | undefined;

  /** The writer's memory limit: the host's, until raiseMemoryLimit doubles it. Kept across reopens while the file is shared. */
  private memoryMb: number;

  private constructor(
    readonly file: string,
    private readonly releaseAfterIdleMs: number,
    private readonly limits: EngineLimits,
  ) {
    this.memoryMb = limits.memoryMb;
  }

  /**
   * Doubles the writer's memory limit, up to `maxMemoryMb`, after a write ran out of memory;
   * returns the new limit, or null when it is at the ceiling already. Only a warehouse that needs
   * it grows: a 1 GB import with random ids ran out at 1.4 million events under 128 MiB, where 3.5
   * million time-ordered ids never did (bench/RESULTS.md, "A 1 GB import").
   */
  async raiseMemoryLimit(signal: AbortSignal | undefined): Promise<number | null> {
    const ceiling = this.limits.maxMemoryMb ?? this.limits.memoryMb;
    if (this.memoryMb >= ceiling) return null;
    const next = Math.min(ceiling, this.memoryMb * 2);
    // The failed write closed the file (see use()), so the next open takes the new limit; a writer
    // that another caller has opened again since takes it now.
    await withFileMutex(this.file, async () => this.open?.conn.run(`SET memory_limit = '${next}MiB'`), signal);
    this.memoryMb = next;
    return next;
  }

  /**
   * Runs `fn` on the open connection, with the file to itself within this process. A call whose
   * signal aborts while it waits for the file gives up and never runs `fn`.
   *
   * A call whose signal aborts while `fn` runs has its query interrupted: the file stays taken
   * until `fn` settles (a query cannot be taken back), and a query that does not end by itself (a
   * huge batch, a slow disk) would otherwise keep every later batch of the file waiting behind it.
   * The interrupted statement fails, so the batch's transaction rolls back whole; a statement that
   * ends before the interrupt lands runs as usual, which the idempotent writes make harmless.
   *
   * When `fn` fails, the file is closed before anyone else may use it, and opened afresh by the
   * next call. A transaction that failed can leave DuckDB's in-memory state disagreeing with the
   * file: after a COMMIT that ran out of memory, the `_id` index kept the rolled-back keys, and
   * the retried batch was refused as duplicates of rows that were never stored. Opening the file
   * again reads the index as committed. (`fn` handles the record-level errors it expects itself;
   * what reaches here concerns the whole batch, and is rare.)
   */
  async use<T>(signal: AbortSignal | undefined, fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    return withFileMutex(
      this.file,
      async () => {
        this.cancelIdle();
        let conn: DuckDBConnection | undefined;
        const interrupt = () => conn?.interrupt();
        signal?.addEventListener('abort', interrupt, { once: true });
        try {
          conn = await this.connection(signal);
          signal?.throwIfAborted();
          return await fn(conn);
        } catch (err) {
          if (conn) await this.closeNow({ checkpoint: false });
          throw err;
        } finally {
          signal?.removeEventListener('abort', interrupt);
          this.scheduleIdle();
        }
      },
      signal,
    );
  }

  /** Drops one reference; the last one closes the file. */
  async release(): Promise<void> {
    if (--this.refs > 0) return;
    if (Warehouse.shared.get(this.file) === this) Warehouse.shared.delete(this.file);
    await withFileMutex(this.file, () => this.closeNow());
  }

  private async connection(signal: AbortSignal | undefined): Promise<DuckDBConnection> {
    if (this.open && (await this.shouldLetGo())) await this.closeNow();
    if (this.open) return this.open.conn;
    // A reader or a writer that asked for the file gets it first; the writer, once it has opened
    // the file (its marker gone), is waited for no longer.
    await waitWhileAnnounced(this.file, ['reader'], signal, MARKER_STALE_MS);
    await waitWhileAnnounced(this.file, ['writer'], signal, HANDOVER_WAIT_MS);
    if (signal?.aborted) throw new RetryableError(`stopped while another process had the local warehouse ${this.file}`, { reason: 'aborted' });
    await prepareDirectory(this.file);
    this.open = await this.openWaitingForTurn(signal);
    // An idle writer would otherwise only notice a reader or a waiting writer at its next batch.
    this.waitersPoll = setInterval(() => {
      void this.shouldLetGo()
        .then((letGo) => (letGo ? withFileMutex(this.file, () => this.closeNow()) : undefined))
        .catch(() => undefined);
    }, WAITERS_POLL_MS);
    this.waitersPoll.unref();
    return this.open.conn;
  }

  /** Whether the open file should go to a reader now, or to a waiting writer whose turn it is. */
  private async shouldLetGo(): Promise<boolean> {
    if (!this.open) return false;
    const waiting = await announced(this.file);
    return waiting.has('reader') || (waiting.has('writer') && Date.now() - this.open.openedAt >= WRITER_TURN_MS);
  }

  /**
   * Opens the file. While another relay process holds it, this process announces itself as a
   * waiting writer and tries again until that one lets go after its turn, up to TURN_WAIT_MS; a
   * file held by anything else (the DuckDB CLI) is reported locked at once.
   */
  private async openWaitingForTurn(signal: AbortSignal | undefined): Promise<Open> {
    let withdrawWaiting: (() => Promise<void>) | undefined;
    const deadline = Date.now() + TURN_WAIT_MS;
    try {
      for (;;) {
        try {
          return await this.openOnce();
        } catch (err) {
          const locked = err instanceof RetryableError && err.details.reason === 'locked';
          if (!locked || signal?.aborted || Date.now() >= deadline) throw err;
          if (!withdrawWaiting) {
            if (!(await this.heldByRelay())) throw err;
            withdrawWaiting = await announce(this.file, 'writer');
          }
          await sleep(TURN_POLL_MS);
        }
      }
    } finally {
      await withdrawWaiting?.();
    }
  }

  /** Whether a relay process holds the file: it says so right after it opens it, so a lock found in between is looked at once more. */
  private async heldByRelay(): Promise<boolean> {
    if ((await announced(this.file)).has('holder')) return true;
    await sleep(TURN_POLL_MS);
    return (await announced(this.file)).has('holder');
  }

  private async openOnce(): Promise<Open> {
    let instance: DuckDBInstance | undefined;
    let conn: DuckDBConnection | undefined;
    let engine: Awaited<ReturnType<typeof engineOptions>> | undefined;
    try {
      engine = await engineOptions({ ...this.limits, memoryMb: this.memoryMb });
      const checkpoint = { checkpoint_threshold: `${checkpointThresholdMb(this.memoryMb)}MB` };
      instance = await DuckDBInstance.create(this.file, { ...WRITER_OPTIONS, ...checkpoint, ...engine.options });
      conn = await instance.connect();
      await ensureTables(conn);
      // Announced before a waiting marker of this process is withdrawn, so that the writer that
      // handed over sees a holder when it finds the file locked in turn.
      const withdrawHolder = await announce(this.file, 'holder');
      return { instance, conn, removeSpill: engine.removeSpill, openedAt: Date.now(), withdrawHolder };
    } catch (err) {
      conn?.closeSync();
      instance?.closeSync();
      await engine?.removeSpill();
      throw toConnectorError(this.file, err);
    }
  }

  private async closeNow({ checkpoint = true } = {}): Promise<void> {
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    this.cancelIdle();
    clearInterval(this.waitersPoll);
    try {
      // The checkpoint runs on DuckDB's threads; closeSync would otherwise do it on the event loop.
      if (checkpoint) await open.conn.run('CHECKPOINT');
      else await open.conn.run('PRAGMA disable_checkpoint_on_shutdown');
    } catch {
      // Closing checkpoints anyway; a failure here is reported by the next open, if it matters.
    } finally {
      open.conn.closeSync();
      open.instance.closeSync();
      await open.withdrawHolder();
      await open.removeSpill();
    }
  }

  private scheduleIdle(): void {
    if (!this.open) return;
    this.idle = setTimeout(() => {
      withFileMutex(this.file, () => this.closeNow()).catch(() => undefined);
    }, this.releaseAfterIdleMs);
    this.idle.unref();
  }

  private cancelIdle(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
  }
}
