import type { RecordKind } from '../../src/core/records/types';
import { newTabState, type Layout, type TabState } from './layout';

/**
 * One spreadsheet the writer writes to: the destination's own (users, sessions, and events until
 * it is full) or one its events continue in. What the writer knows of it is a cache: the layout is
 * read again after any failure, the tabs' states are checked by every flush.
 */
export class Book {
  layout: Layout | undefined;
  /** Tab states by lower-cased title (Sheets compares tab names case-insensitively). */
  readonly tabs = new Map<string, TabState>();
  /** The highest capacity warning logged (0, 0.8, 0.9). */
  warnedAt = 0;
  /** Events tabs check each flush against all their ids (TabState.wantIds): a re-send came. */
  wantIds = false;

  constructor(readonly id: string) {}

  state(title: string, kind: RecordKind): TabState {
    let s = this.tabs.get(title.toLowerCase());
    if (!s) {
      s = newTabState(kind);
      s.wantIds = kind === 'event' && this.wantIds;
      this.tabs.set(title.toLowerCase(), s);
    }
    return s;
  }
}
