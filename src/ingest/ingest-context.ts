import type { ParameterizedContext } from 'koa';
import type { RequestState } from '../core/requests/request-state';
import type { ParsedBody } from './payload';

/** The request state on the v3 routes: what every route leaves (RequestState), and the body read-body.ts parsed. */
export interface IngestState extends RequestState {
  body?: ParsedBody;
}

export type IngestContext = ParameterizedContext<IngestState>;
