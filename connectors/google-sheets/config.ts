import * as z from 'zod';
import { checkGoogleAuth, createGoogleAuthSettings } from '../shared/google-auth-settings';
import { tabTemplateProblem } from './tab-template';

/** Sheets tab names: any text up to 100 characters; `_YYYY_MM` is added to the events tab on monthly rollover. */
const tabName = z
  .string()
  .min(1)
  .max(90)
  .refine((s) => !/[\u0000-\u001f]/.test(s), 'a tab name cannot contain control characters');

/** A spreadsheet's address as the browser shows it when it is open: `docs.google.com/spreadsheets/d/<id>/edit#gid=0` (also `/u/1/d/<id>`). */
const SPREADSHEET_URL = /^https?:\/\/docs\.google\.com\/spreadsheets\/(?:u\/\d+\/)?d\/([A-Za-z0-9_-]{10,200})(?:[/?#]|$)/i;

/**
 * The id in what people paste: the spreadsheet's full address, or the id itself. Anything else is
 * left as it is for the schema to refuse with a message saying what to paste.
 */
export function spreadsheetIdOf(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  const found = SPREADSHEET_URL.exec(text);
  return found && found[1] !== 'e' ? found[1] : text;
}

const spreadsheetIdSchema = z.preprocess(
  spreadsheetIdOf,
  z.string().superRefine((id, ctx) => {
    if (/^[A-Za-z0-9_-]{10,200}$/.test(id)) return;
    const message = /\/spreadsheets\/d\/e\//.test(id)
      ? 'this is a link published to the web, which cannot be written to: open the spreadsheet itself and copy the address from the browser (https://docs.google.com/spreadsheets/d/<id>/edit)'
      : /^https?:/i.test(id)
        ? 'not the address of a spreadsheet: open the spreadsheet and copy the address from the browser (https://docs.google.com/spreadsheets/d/<id>/edit), or paste the id between /d/ and /edit'
        : "a spreadsheet's id is the part of its address between /d/ and /edit; the whole address may be pasted too";
    ctx.addIssue({ code: 'custom', message });
  }),
);

/** Settings of a `google-sheets` destination. */
export const GoogleSheetsSettingsSchema = z
  .strictObject({
    /** The spreadsheet, as in its URL `docs.google.com/spreadsheets/d/<id>/edit`. Share it with the service account as Editor. */
    spreadsheetId: spreadsheetIdSchema
      .optional()
      .meta({ title: 'Spreadsheet' })
      .describe(
        "The spreadsheet: paste its address as the browser shows it (https://docs.google.com/spreadsheets/d/<id>/edit#gid=0) or just the id between /d/ and /edit; the id is what is stored. Share the spreadsheet with the service account's e-mail as Editor. Required unless createSpreadsheet is on.",
      ),
    /**
     * Instead of `spreadsheetId`: create a spreadsheet on first use. Its id is logged and kept in
     * `DATA_DIR/google-sheets/<tracker>/<destination>.json`; copy it into `spreadsheetId` to make
     * the destination independent of that file. Default false.
     */
    createSpreadsheet: z
      .boolean()
      .optional()
      .meta({ title: 'Create a spreadsheet' })
      .describe(
        'Instead of spreadsheetId: create a spreadsheet on first use. Its id is logged and kept in DATA_DIR/google-sheets/<tracker>/<destination>.json; copy it into spreadsheetId. Until shared, it is visible only to the service account. Default: off.',
      ),
    /** Title of a created spreadsheet. Default `Tributary <tracker>`. */
    title: z.string().min(1).max(200).optional().meta({ title: 'Title of a created spreadsheet' }).describe('Title of a spreadsheet created by createSpreadsheet. Default: Tributary <tracker>.'),
    ...createGoogleAuthSettings({ keyFileExample: '/etc/tributary/sheets-key.json', endpointExample: 'http://127.0.0.1:8085/' }),
    /** Tab names. Default `users`, `sessions`, `events`. */
    tabs: z
      .strictObject({
        users: tabName.optional().describe('Tab of users, one row per _uid. Default: users.'),
        sessions: tabName.optional().describe('Tab of sessions, one row per _sid. Default: sessions.'),
        events: tabName.optional().describe('Tab of events; with monthly rollover, _YYYY_MM is appended (events_2026_11). Default: events.'),
      })
      .optional()
      .meta({ title: 'Tab names' })
      .describe(
        'Tab names, e.g. {"users": "users", "sessions": "sessions", "events": "events"}; each is optional (up to 90 characters) and the three must differ. Default: users, sessions, events.',
      ),
    /**
     * A template for the events tab's name instead of `tabs.events`: `{_event}` gives one tab per
     * event name, each with its own header (tab-template.ts). Monthly rollover still applies
     * (`signup_2026_11`). Default none: one events tab.
     */
    tab: z
      .string()
      .min(1)
      .max(90)
      .optional()
      .meta({ title: 'One events tab per event name' })
      .describe(
        'A template for the events tab instead of tabs.events: {_event} gives one tab per event name (signup, order…), each with its own header; text around it is kept (events {_event}). Names are cleaned for Sheets. With monthly rollover the month is appended (signup_2026_11). Default: none, one events tab.',
      ),
    /**
     * `monthly`: events go to one tab per month of `_received_at` (UTC), `events_2026_11`, so old
     * months can be archived or deleted to make room. `none`: one `events` tab. Default `monthly`.
     */
    rollover: z
      .enum(['monthly', 'none'])
      .optional()
      .meta({ title: 'Events tab per month', 'x-enum-labels': { monthly: 'One events tab a month', none: 'One events tab' } })
      .describe(
        'monthly: events go to one tab per UTC month of _received_at (events_2026_11), so old months can be archived or deleted to make room. none: a single events tab. Default: monthly.',
      ),
    /** Write requests per minute this destination allows itself (Google: 60 per user, 300 per project). Default 60. */
    writeRequestsPerMinute: z
      .number()
      .int()
      .min(1)
      .max(300)
      .optional()
      .meta({ title: 'Write requests a minute' })
      .describe(
        'Sheets API write requests per minute allowed per credential, shared by the destinations of a process. Google allows 60 per user and 300 per project; processes sharing a service account should split them. Default: 60.',
      ),
    /** Read requests per minute (Google: 60 per user, 300 per project). Default 60. */
    readRequestsPerMinute: z
      .number()
      .int()
      .min(1)
      .max(300)
      .optional()
      .meta({ title: 'Read requests a minute' })
      .describe(
        'Sheets API read requests per minute allowed per credential, shared by the destinations of a process. Google allows 60 per user and 300 per project. Default: 60.',
      ),
    /** No write takes a spreadsheet past this many cells (Google's limit: 10 000 000): events move on, or delivery pauses (`whenFull`). Default 9 500 000. */
    maxCells: z
      .number()
      .int()
      .min(100)
      .max(10_000_000)
      .optional()
      .meta({ title: 'Most cells a spreadsheet may hold' })
      .describe(
        "No write takes a spreadsheet past this many cells, empty cells of every tab included: before it would, events move on to the next spreadsheet or delivery pauses with the records queued (see whenFull). Google's limit: 10000000. Default: 9500000.",
      ),
    /**
     * What happens when the next events would take the spreadsheet past `maxCells`:
     * `new-spreadsheet`: events continue in the next of `nextSpreadsheetIds`, else in a spreadsheet
     * Tributary creates; users and sessions stay. `pause`: delivery pauses until room is made.
     * Default `new-spreadsheet`.
     */
    whenFull: z
      .enum(['new-spreadsheet', 'pause'])
      .optional()
      .meta({ title: 'When the spreadsheet is full', 'x-enum-labels': { 'new-spreadsheet': 'Continue in the next spreadsheet', pause: 'Pause delivery' } })
      .describe(
        'What happens when the next events would take the spreadsheet past maxCells. new-spreadsheet: events continue in the next spreadsheet of nextSpreadsheetIds, or when none is left in one Tributary creates (which a service account cannot: Google gives it no Drive storage), with the same tabs and headers; users and sessions stay in this one. pause: delivery pauses, records stay queued, until old tabs are deleted or spreadsheetId changes. Default: new-spreadsheet.',
      ),
    /**
     * Spreadsheets events continue in, in this order, when the one they go to is full. Create them
     * yourself and share them with the service account as Editor: they stay yours. Default none.
     */
    nextSpreadsheetIds: z
      .array(spreadsheetIdSchema)
      .max(100)
      .optional()
      .meta({ title: 'Spreadsheets to continue in when full' })
      .describe(
        "Spreadsheets events continue in, in this order, each time the one they go to is full (whenFull: new-spreadsheet), e.g. [\"1AbC…\"]. Create them in your Drive and share them with the service account's e-mail as Editor, as spreadsheetId: they stay yours and visible to you. Without them Tributary creates a spreadsheet, which works only with credentials that may own files (a person's, not a service account's). Default: none.",
      ),
    /** A request without an answer after this long is abandoned and retried by the delivery loop. Default 60 000 ms. */
    requestTimeoutMs: z
      .number()
      .int()
      .min(100)
      .max(600_000)
      .optional()
      .meta({ title: 'Wait for an answer (ms)' })
      .describe('Milliseconds to wait for an answer from Google before a request is abandoned and retried. Default: 60000 (60 s).'),
  })
  .superRefine((s, ctx) => {
    if (!s.spreadsheetId === !s.createSpreadsheet) {
      ctx.addIssue({ code: 'custom', path: ['spreadsheetId'], message: 'set either spreadsheetId or createSpreadsheet: true (not both)' });
    }
    checkGoogleAuth(s, ctx);
    const next = s.nextSpreadsheetIds ?? [];
    if (new Set(next).size < next.length || (s.spreadsheetId !== undefined && next.includes(s.spreadsheetId))) {
      ctx.addIssue({ code: 'custom', path: ['nextSpreadsheetIds'], message: 'list each spreadsheet once, and not spreadsheetId itself' });
    }
    if (s.tab !== undefined) {
      const problem = tabTemplateProblem(s.tab);
      if (problem) ctx.addIssue({ code: 'custom', path: ['tab'], message: problem });
      if (s.tabs?.events !== undefined) ctx.addIssue({ code: 'custom', path: ['tab'], message: 'tab names the events tabs, as tabs.events does: give one of them' });
    }
    const t = tabNames(s);
    if (new Set([t.users, t.sessions, t.events].map((n) => n.toLowerCase())).size < 3) {
      ctx.addIssue({ code: 'custom', path: ['tabs'], message: 'the users, sessions and events tabs need three different names' });
    }
  })
  .meta({
    title: 'Google Sheets',
    description: 'Users, sessions and events written to tabs of a Google spreadsheet. Set either spreadsheetId or createSpreadsheet.',
  });

function tabNames(s: { tabs?: { users?: string; sessions?: string; events?: string } | undefined }) {
  return { users: s.tabs?.users ?? DEFAULTS.tabs.users, sessions: s.tabs?.sessions ?? DEFAULTS.tabs.sessions, events: s.tabs?.events ?? DEFAULTS.tabs.events };
}

export type GoogleSheetsSettings = z.infer<typeof GoogleSheetsSettingsSchema>;

/**
 * 5 000 records or 2 s, whichever comes first. Flushes are then at most 30 a minute, each one
 * values.batchUpdate for all its rows (and a spreadsheets.batchUpdate when a grid needs rows, about
 * one flush in ten), which keeps 5 000 events a minute — and far more, since a backlog fills the
 * batches — under 60 write requests a minute;
 * 5 000 rows of a dozen columns are ~1–2 MB, Google's recommended payload.
 */
export const BATCH_LIMITS = { maxRecords: 5000, maxAgeMs: 2000 } as const;

export const DEFAULTS = {
  tabs: { users: 'users', sessions: 'sessions', events: 'events' },
  rollover: 'monthly',
  writeRequestsPerMinute: 60,
  readRequestsPerMinute: 60,
  maxCells: 9_500_000,
  whenFull: 'new-spreadsheet',
  requestTimeoutMs: 60_000,
} as const;

/** Settings with every default filled in. */
export interface ResolvedSettings {
  tabs: { users: string; sessions: string; events: string };
  /** The events tab's template (setting `tab`), when events are split by name. */
  tabTemplate: string | undefined;
  rollover: 'monthly' | 'none';
  writeRequestsPerMinute: number;
  readRequestsPerMinute: number;
  maxCells: number;
  whenFull: 'new-spreadsheet' | 'pause';
  nextSpreadsheetIds: readonly string[];
  requestTimeoutMs: number;
}

export function resolveSettings(s: GoogleSheetsSettings): ResolvedSettings {
  return {
    tabs: tabNames(s),
    tabTemplate: s.tab,
    rollover: s.rollover ?? DEFAULTS.rollover,
    writeRequestsPerMinute: s.writeRequestsPerMinute ?? DEFAULTS.writeRequestsPerMinute,
    readRequestsPerMinute: s.readRequestsPerMinute ?? DEFAULTS.readRequestsPerMinute,
    maxCells: s.maxCells ?? DEFAULTS.maxCells,
    whenFull: s.whenFull ?? DEFAULTS.whenFull,
    nextSpreadsheetIds: s.nextSpreadsheetIds ?? [],
    requestTimeoutMs: s.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
  };
}
