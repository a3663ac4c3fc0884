import type { DestinationWriter } from '../../../connectors/types';
import type { RecordKind, TrackedRecord } from '../../../src/core/records/types';

/**
 * A stored row as the contract suite compares it: column name → value, numbers as numbers,
 * booleans as booleans, text as text. Only the key columns (`_id`, `_uid`, `_sid`, `_event`) and
 * the property columns are kept; NULL and empty cells are left out, and so are `_event_at`,
 * `_received_at`, `_context` and `_properties`, which each destination stores in its own types
 * (or not at all).
 */
export type StoredRow = Record<string, unknown>;

/** Columns every destination stores in a type of its own: not compared by the suite. */
const BOOKKEEPING = new Set(['_event_at', '_received_at', '_context', '_properties']);

/** A row as the destination answered it, reduced to a {@link StoredRow}. */
export function storedRow(row: Record<string, unknown>): StoredRow {
  const out: StoredRow = {};
  for (const [name, value] of Object.entries(row)) {
    if (BOOKKEEPING.has(name) || value === null || value === undefined || value === '') continue;
    out[name] = value;
  }
  return out;
}

/**
 * One destination of its own (a fresh file, spreadsheet or dataset) with a writer open on it,
 * and the faults the suite puts it through, each modelled the way this destination meets it.
 * A fault is armed until it has fired once or `clearFaults()` is called, whichever comes first.
 */
export interface ContractDestination {
  /** The writer open now; `reopen()` replaces it. */
  readonly writer: DestinationWriter;
  /** Closes the writer and opens another on the same destination, as a restarted worker does. */
  reopen(): Promise<void>;
  /** Every stored row of a kind's table (or tab), in any order; none before the table exists. */
  rows(kind: RecordKind): Promise<StoredRow[]>;
  /**
   * The next request that stores records of `kind` is applied, but its answer never arrives (for
   * an embedded destination: the process stops right after the commit).
   */
  loseAnswer(kind: RecordKind): Promise<void> | void;
  /** Arms one of the harness's `transientFaults` for the next write request. */
  failTransiently(fault: string): Promise<void> | void;
  /** The destination refuses access (permission removed, credentials refused, directory unwritable). */
  denyAccess(): Promise<void> | void;
  /**
   * Returns these events as they will be refused for good: unchanged with the next write request
   * armed to be refused as invalid (a fake's 400), or altered so that the destination refuses
   * their content (a value the column's type cannot take).
   */
  refuse(events: TrackedRecord[]): Promise<TrackedRecord[]> | TrackedRecord[];
  clearFaults(): Promise<void> | void;
  /** Closes the writer (again, if the test did) and removes what the destination left behind. */
  close(): Promise<void>;
}

export interface ContractHarness {
  /**
   * Names of the transient failures the destination can be put through, each answered with
   * RetryableError: e.g. `429 RESOURCE_EXHAUSTED`, `503 backendError`, `file locked by another process`.
   */
  readonly transientFaults: readonly string[];
  /** Once before the suite, e.g. to start a fake. */
  setup?(): Promise<void>;
  teardown?(): Promise<void>;
  open(): Promise<ContractDestination>;
}
