import type { Sheets, StructureRequest } from './client';

/**
 * The spreadsheets a destination's events continued in once its own spreadsheet was full, kept
 * as developer metadata on that spreadsheet (the one `spreadsheetId` names): it travels with the
 * spreadsheet, so every worker and every restart finds the same chain, whatever its disk, and it
 * counts toward no cell limit. One entry per continuation, under one key; the last is where events
 * go now. https://developers.google.com/workspace/sheets/api/guides/metadata
 */
export const CONTINUATION_KEY = 'tributary.events-continue-in';

export interface Continuation {
  spreadsheetId: string;
  title: string;
  /** ISO time of the switch. */
  createdAt: string;
}

function parse(value: string | null | undefined): Continuation | undefined {
  try {
    const c = JSON.parse(value ?? '') as Partial<Continuation>;
    if (typeof c.spreadsheetId === 'string' && c.spreadsheetId !== '' && typeof c.createdAt === 'string') return { spreadsheetId: c.spreadsheetId, title: String(c.title ?? ''), createdAt: c.createdAt };
  } catch {
    // Not ours, or damaged by hand: ignored.
  }
  return undefined;
}

/** The chain, oldest first, as spreadsheets.get answered the spreadsheet's developer metadata. */
export function continuationsOf(spreadsheet: Sheets): Continuation[] {
  const found: Continuation[] = [];
  for (const m of spreadsheet.developerMetadata ?? []) {
    const c = m.metadataKey === CONTINUATION_KEY ? parse(m.metadataValue) : undefined;
    if (c) found.push(c);
  }
  return found.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
}

/** The spreadsheets.batchUpdate request that records a continuation (visible to any credential with access to the spreadsheet). */
export function recordContinuation(c: Continuation): StructureRequest {
  return { createDeveloperMetadata: { developerMetadata: { metadataKey: CONTINUATION_KEY, metadataValue: JSON.stringify(c), location: { spreadsheet: true }, visibility: 'DOCUMENT' } } };
}

/** `Tributary shop` → `Tributary shop · events 2`, then 3… */
export function continuationTitle(homeTitle: string, chainLength: number): string {
  return `${homeTitle || 'Tributary'} · events ${chainLength + 2}`;
}
