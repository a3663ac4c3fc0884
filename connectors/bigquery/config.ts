import * as z from 'zod';
import { checkGoogleAuth, createGoogleAuthSettings } from '../shared/google-auth-settings';

/**
 * Project ids: 6–30 lowercase letters, digits and hyphens, starting with a letter, optionally
 * domain-scoped (`example.com:my-project`). https://cloud.google.com/resource-manager/docs/creating-managing-projects
 */
const PROJECT_ID = /^(?:[a-z][a-z0-9.-]*:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
/** Dataset ids: letters, digits and underscores, at most 1024. https://cloud.google.com/bigquery/docs/datasets#dataset-naming */
const DATASET_ID = /^[A-Za-z0-9_]{1,1024}$/;
/** Table names Tributary creates: the same alphabet, so they never need escaping. */
const TABLE_ID = /^[A-Za-z0-9_]{1,1024}$/;

export const DEFAULT_LOCATION = 'US';
export const DEFAULT_MAX_COLUMNS = 9_990;
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
export const DEFAULT_TABLES = { events: 'events', users: 'users', sessions: 'sessions' } as const;

/** Settings of a `bigquery` destination. */
export const BigQuerySettingsSchema = z
  .strictObject({
    /** The project that owns the dataset and runs the query jobs. Required. */
    projectId: z
      .string()
      .regex(PROJECT_ID, 'a Google Cloud project id (6–30 lowercase letters, digits and hyphens)')
      .meta({ title: 'Project' })
      .describe('Google Cloud project id (6–30 lowercase letters, digits and hyphens) of the project that owns the dataset and runs the query jobs, e.g. my-project.'),
    /** The dataset; created when missing. Required. */
    dataset: z
      .string()
      .regex(DATASET_ID, 'a dataset id is letters, digits and underscores')
      .meta({ title: 'Dataset' })
      .describe('Dataset id (letters, digits and underscores), e.g. tributary. Created when missing.'),
    /**
     * Where the dataset lives (`US`, `EU`, `europe-west1`…). Used to create it, and checked against
     * an existing dataset's location. Default `US`.
     */
    location: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .meta({ title: 'Dataset location' })
      .describe('Location of the dataset, e.g. US, EU or europe-west1. Used to create it; an existing dataset in another location is refused. Default: US.'),
    ...createGoogleAuthSettings({ keyFileExample: '/etc/tributary/bq-key.json', endpointExample: 'http://127.0.0.1:9050 (/bigquery/v2 is appended)' }),
    /** Table names. Defaults `events`, `users`, `sessions`. */
    tables: z
      .strictObject({
        events: z.string().regex(TABLE_ID).optional().describe('Table of events, partitioned by day on _event_at. Default: events.'),
        users: z.string().regex(TABLE_ID).optional().describe('Table of users, one row per _uid. Default: users.'),
        sessions: z.string().regex(TABLE_ID).optional().describe('Table of sessions, one row per _sid. Default: sessions.'),
      })
      .optional()
      .meta({ title: 'Table names' })
      .describe(
        'Table names (letters, digits and underscores), e.g. {"events": "events", "users": "users", "sessions": "sessions"}; each is optional and the three must differ, ignoring case. Default: events, users, sessions.',
      ),
    /**
     * Most property columns per table; past it, properties are kept in `_properties` only.
     * Default and maximum 9 990 (BigQuery allows 10 000 columns, Tributary's own take up to 8).
     */
    maxColumns: z
      .number()
      .int()
      .min(0)
      .max(9_990)
      .optional()
      .meta({ title: 'Most property columns a table' })
      .describe('Most property columns per table; further properties are kept only in the _properties JSON column. Default (and maximum): 9990.'),
    /** Longest wait for one API call before it is abandoned and the batch retried. Default 60 000 ms. */
    requestTimeoutMs: z
      .number()
      .int()
      .min(100)
      .max(600_000)
      .optional()
      .meta({ title: 'Wait for an answer (ms)' })
      .describe('Milliseconds to wait for one BigQuery API call before it is abandoned and the batch retried. Default: 60000 (60 s).'),
  })
  .superRefine((s, ctx) => {
    checkGoogleAuth(s, ctx);
    // BigQuery table names are case-sensitive, but two names differing only in case confuse people.
    if (new Set(Object.values(tableNames(s)).map((t) => t.toLowerCase())).size < 3) {
      ctx.addIssue({ code: 'custom', path: ['tables'], message: 'the events, users and sessions tables need three different names' });
    }
  })
  .meta({
    title: 'BigQuery',
    description:
      'Events, users and sessions written to tables of a BigQuery dataset. The service account needs BigQuery Data Editor on the dataset (or the project, to create it) and BigQuery Job User on the project.',
  });

export type BigQuerySettings = z.infer<typeof BigQuerySettingsSchema>;

function tableNames(s: { tables?: { events?: string; users?: string; sessions?: string } | undefined }): ResolvedSettings['tables'] {
  return { events: s.tables?.events ?? DEFAULT_TABLES.events, users: s.tables?.users ?? DEFAULT_TABLES.users, sessions: s.tables?.sessions ?? DEFAULT_TABLES.sessions };
}

/** Settings with every default filled in. */
export interface ResolvedSettings {
  projectId: string;
  dataset: string;
  location: string;
  keyFile: string | undefined;
  credentials: BigQuerySettings['credentials'];
  endpoint: string | undefined;
  tables: { events: string; users: string; sessions: string };
  maxColumns: number;
  requestTimeoutMs: number;
}

export function resolveSettings(s: BigQuerySettings): ResolvedSettings {
  return {
    projectId: s.projectId,
    dataset: s.dataset,
    location: s.location ?? DEFAULT_LOCATION,
    keyFile: s.keyFile,
    credentials: s.credentials,
    endpoint: s.endpoint,
    tables: tableNames(s),
    maxColumns: s.maxColumns ?? DEFAULT_MAX_COLUMNS,
    requestTimeoutMs: s.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  };
}
