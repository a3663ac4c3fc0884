import type { ParameterizedContext } from 'koa';
import type { PrivacyPlan } from '../records/privacy';
import type { TrackedRecord } from '../records/types';

/** The fixed body a pixel or script path answers with, errors included. */
export type FixedResponse = 'gif' | 'js';

/**
 * What a request's handling leaves in `ctx.state` for the middleware around it: the ingest and
 * webhook routes write it, the error handler and the observers of finished requests (live view,
 * request history, traffic counts) read it. Every field may be missing: a request can be refused
 * before any is set.
 */
export interface RequestState {
  /** Bytes of the request body as read (src/ingest/read-body.ts). */
  bodyBytes?: number;
  /** The route answers with a pixel or a script, errors too. */
  fixed?: FixedResponse;
  /** The error's message, for the request history when the answer is a fixed body. */
  errorMessage?: string;
  /** The tracker token the request carried (header, body or URL). */
  presentedToken?: string;
  /** Entries the request's payload held, records or not. */
  recordCount?: number;
  /** The tracker the request was resolved to. */
  trackerId?: string;
  /** The tracker's privacy rules, when it has some: what the live view and history may show. */
  privacy?: PrivacyPlan;
  /** The error codes of the refused entries of a partly accepted batch. */
  refusedCodes?: string[];
  /** The records accepted, as queued. */
  liveRecords?: TrackedRecord[];
  /** Of the records sent, those dropped as repeats of a client key. */
  liveDuplicates?: number;
}

/** A Koa context whose state is a RequestState. */
export type HttpContext = ParameterizedContext<RequestState>;
