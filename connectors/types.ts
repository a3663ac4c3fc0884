import type * as z from 'zod';
import type { Logger } from '../src/core/logger';
import type { TrackedRecord } from '../src/core/records/types';
import type { ConnectorError } from './errors';

/** How the delivery plumbing groups records for one write. */
export interface BatchLimits {
  /** Most records in one write. */
  maxRecords: number;
  /** A batch that is not full is written once its oldest record has waited this long. */
  maxAgeMs: number;
}

/** One record's fate in a write. `retry` records are sent again; `failed` ones are dead-lettered. */
export type RecordOutcome = { status: 'ok' } | { status: 'retry'; error: ConnectorError } | { status: 'failed'; error: ConnectorError };

/** What a connector gets for one destination. Holds no plumbing: batching and retries live in jobs/. */
export interface DestinationContext<S> {
  trackerId: string;
  destinationId: string;
  settings: S;
  /** Root for anything a connector keeps on local disk. */
  dataDir: string;
  /** What an embedded engine (the local warehouse's DuckDB) may take of the host; absent, the connector's defaults. */
  engine?: EngineLimits;
  logger: Logger;
  now: () => Date;
}

/**
 * What one open instance of an embedded engine may take of the host. DuckDB's own default is a
 * buffer pool of 80 % of the machine's RAM, which a writer kept open under steady load fills with
 * the blocks it touched (bench/RESULTS.md, "Memory under a steady load"); with a limit it evicts
 * clean blocks and spills what a query needs beyond it to `tempDirectory`.
 */
export interface EngineLimits {
  /** Memory of one open instance (a writer, or one query or export), in MiB (WAREHOUSE_MEMORY_MB). Default 128. */
  memoryMb: number;
  /**
   * How far a writer may raise its own limit when a write runs out of memory (WAREHOUSE_MEMORY_MAX_MB;
   * default 1024); a large warehouse written with random ids needs more than `memoryMb`. Unset:
   * never above `memoryMb`.
   */
  maxMemoryMb?: number;
  /** Where it spills beyond that (WAREHOUSE_TEMP_DIR); each instance gets a directory of its own inside, removed when it closes. */
  tempDirectory: string;
}

/** What the delivery plumbing knows about a write beyond its records. */
export interface WriteOptions {
  /**
   * Some of these records may have reached the destination already, at any time in the past: an
   * earlier attempt got no answer, or the process that held the destination died mid-write. A
   * connector whose own deduplication is time-limited checks before writing them again.
   */
  resend: boolean;
  /**
   * The records come from the destination's history lane (a backfill, an import), not from live
   * traffic: a connector may write them the way history is best written (BigQuery: load jobs).
   */
  history?: boolean;
}

/** One destination's open handle. `write` returns one outcome per record, in order. */
export interface DestinationWriter {
  /**
   * Writes a batch. Events must be appended idempotently (keyed on `record.id`), however long after
   * an earlier attempt; users and sessions are merged by key in the order given. Throws only
   * ConnectorError subclasses for a failure of the whole batch. `signal` aborts when the delivery
   * plumbing gives the write up (its deadline passed, or the process stops): stop soon after.
   */
  write(records: readonly TrackedRecord[], signal: AbortSignal, options?: WriteOptions): Promise<RecordOutcome[]>;
  /**
   * A harmless round trip that proves the settings work (e.g. the tables exist or can be made).
   * Notes are shown to the operator (e.g. the id of a spreadsheet it created).
   */
  test(signal: AbortSignal): Promise<TestReport | void>;
  /** What the destination looks like now (e.g. how full a spreadsheet is), shown with its delivery status. */
  details?(): DestinationDetails;
  close(): Promise<void>;
}

export interface TestReport {
  notes: string[];
}

export type DestinationDetails = Record<string, string | number | boolean | null>;

/** One thing to do outside Tributary before a destination can work, with the page where it is done. */
export interface SetupStep {
  text: string;
  url?: string;
  /** Text to copy and run elsewhere (SQL, a command), shown as code with a copy button. */
  code?: string;
}

/**
 * How the console guides someone through a first setup: the few settings that matter first, every
 * other one under "Advanced" with its default, and the steps to take elsewhere (a cloud console).
 */
export interface SetupGuide {
  /** Settings shown first, in this order, with a label a person understands. */
  primary: Array<{ setting: string; label: string; hint: string }>;
  /** The setting that takes a service-account key, pasted or uploaded as the file the provider gives. */
  keySetting?: string;
  /** What to do with the key's account once it is known; `{email}` stands for its e-mail. */
  afterKey?: string;
  /**
   * A setting that stands for several others and is split into them when saved (a connection string
   * into host, port, user…). Given in an edit, it replaces the parts saved before, except those
   * changed beside it.
   */
  splits?: { setting: string; into: string[] };
  steps: SetupStep[];
}

export interface Connector<S = unknown> {
  /** The destination `type` this connector serves, e.g. `local`. */
  readonly type: string;
  readonly description: string;
  /** A guided first setup in the console; without one, every setting is shown alike. */
  readonly setup?: SetupGuide;
  /** Checked when a destination is saved and again when a worker opens it. */
  readonly settingsSchema: z.ZodType<S>;
  readonly batch: BatchLimits;
  /** A destination's own limits, where its settings may set them; `batch` otherwise. */
  batchFor?(settings: S): BatchLimits;
  /**
   * Records of one history batch (a backfill's, an import's), for a destination that writes history
   * in large units (BigQuery's load jobs). Default 250: small, since a live record that arrives
   * meanwhile waits for the batch in hand.
   */
  readonly historyBatchRecords?: number;
  /**
   * The destination takes one writer at a time (e.g. a spreadsheet whose writer computes where rows
   * go). A tracker with several partitions delivers them in parallel, so such a destination refuses it.
   */
  readonly singleWriter?: boolean;
  open(ctx: DestinationContext<S>): Promise<DestinationWriter>;
}
