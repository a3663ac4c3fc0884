import type { ConnectorError } from '../errors';
import type { RecordOutcome } from '../types';
import type { BigQueryApi } from './client';
import type { ResolvedSettings } from './config';
import type { SchemaCache } from './schema';

/** What each part of a write (events, users, sessions) works with. */
export interface WriteDeps {
  api: BigQueryApi;
  schema: SchemaCache;
  settings: ResolvedSettings;
}

/**
 * A part's result: the outcome of every record it settled, by record id, and, when some records
 * could not be settled because a whole request failed, that request's error.
 */
export interface PartResult {
  outcomes: Map<string, RecordOutcome>;
  error?: ConnectorError;
}
