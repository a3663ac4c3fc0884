import { ref, type ResponseName } from './components';
import { errors, SERVER_ERRORS } from './responses';
import type { JsonSchema, Operation, Parameter, PathItem, Reference } from './types';

const json = (schema: JsonSchema | Reference) => ({ 'application/json': { schema } });
const object = (properties: Record<string, JsonSchema | Reference>, required: string[] = []): JsonSchema => ({ type: 'object', properties, ...(required.length ? { required } : {}) });
const list = (name: string, items: JsonSchema | Reference): JsonSchema => object({ [name]: { type: 'array', items } }, [name]);
const int = { type: 'integer' };
const str = { type: 'string' };

interface OpSpec {
  summary: string;
  description?: string;
  body?: JsonSchema | Reference;
  /** Status and description of the answer; JSON with `schema` unless `content` says otherwise. */
  ok: [status: string, description: string, schema?: JsonSchema | Reference];
  content?: string;
  query?: Parameter[];
  errors?: ResponseName[];
  /** Logging in and out need no token. */
  open?: boolean;
}

const AUTH: Array<Record<string, string[]>> = [{ adminBearer: [] }, { adminCookie: [] }];
/** Every admin route: the token, the cookie's origin check, and what reading a body may answer. */
const COMMON: ResponseName[] = ['AdminUnauthorized', 'AdminForbidden', ...SERVER_ERRORS];

function op(operationId: string, spec: OpSpec): Operation {
  const [status, description, schema] = spec.ok;
  const bodyErrors: ResponseName[] = spec.body ? ['AdminInvalid', 'AdminBodyTooLarge', 'AdminMediaType'] : spec.query ? ['AdminInvalid'] : [];
  const names = [...new Set<ResponseName>([...(spec.open ? SERVER_ERRORS : COMMON), ...bodyErrors, ...(spec.errors ?? [])])];
  return {
    operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: ['admin'],
    security: spec.open ? [] : AUTH,
    ...(spec.query ? { parameters: spec.query } : {}),
    ...(spec.body ? { requestBody: { required: false, content: json(spec.body) } } : {}),
    responses: {
      [status]: { description, ...(schema ? { content: spec.content ? { [spec.content]: { schema } } : json(schema) } : {}) },
      ...errors(...names),
    },
  };
}

const tracker = ref('parameters/trackerId');
const dest = ref('parameters/destinationId');
const source = ref('parameters/sourceId');
const withPath = (parameters: Reference[], item: Omit<PathItem, 'parameters'>): PathItem => ({ ...item, parameters });

const requestQuery: Parameter[] = [
  { name: 'status', in: 'query', description: '`401`, a class (`4xx`), `accepted` or `refused`.', schema: { type: 'string', pattern: '^([1-5][0-9]{2}|[1-5]xx|accepted|refused)$' } },
  { name: 'code', in: 'query', description: 'An `ERR_*` code, any case.', schema: { type: 'string' } },
  { name: 'text', in: 'query', description: 'Found, in any case, in the path, query, code, message, user agent, IP or token hint.', schema: { type: 'string', maxLength: 200 } },
  { name: 'limit', in: 'query', description: 'Entries answered at most.', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
];

const auditQuery: Parameter[] = [
  { name: 'limit', in: 'query', description: 'Entries answered at most.', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
  { name: 'before', in: 'query', description: 'Older than this entry id (paging back).', schema: { type: 'string' } },
  { name: 'since', in: 'query', description: 'Not older than this time.', schema: { type: 'string', format: 'date-time' } },
  { name: 'tracker', in: 'query', description: 'About this tracker.', schema: { type: 'string' } },
  { name: 'actor', in: 'query', description: 'By this person or token id, or a label holding this text (an e-mail).', schema: { type: 'string' } },
  { name: 'outcome', in: 'query', schema: { type: 'string', enum: ['ok', 'refused', 'failed'] } },
];

const entryIds = object({ ids: { type: 'array', maxItems: 5000, items: str, description: 'Entry ids; omitted: all.' } });
const sourceInput = object({ type: { type: 'string', enum: ['github', 'stripe', 'shopify', 'slack', 'standard-webhooks', 'hmac'] }, id: str, secret: str, hmac: { type: 'object' }, mapping: { type: 'object' } }, ['type']);

export const ADMIN_PATHS: Record<string, PathItem> = {
  '/admin/api/session': {
    post: op('signIn', {
      summary: 'Sign in to the console: e-mail and password, or the break-glass admin token (with an e-mail and a password on a relay without people: the first admin).',
      body: object({ email: str, password: str, token: str }),
      ok: ['204', 'Signed in; `Set-Cookie: tributary_session=<opaque id>`. 201 when the first admin was created.'],
      open: true,
      errors: ['AdminUnauthorized', 'AdminInvalid', 'AdminConflict', 'AdminSignInLimited', 'AdminBodyTooLarge', 'AdminMediaType'],
    }),
    get: op('session', { summary: 'Who is signed in (bearer or cookie) and what they may do.', ok: ['200', 'The caller.', ref('schemas/Caller')] }),
    delete: op('signOut', { summary: 'End the console session and clear its cookie.', ok: ['204', 'Signed out.'], open: true }),
  },
  '/admin/api/session/setup': {
    get: op('sessionSetup', { summary: 'Whether the relay still needs its first admin.', ok: ['200', 'The answer.', object({ firstAdminNeeded: { type: 'boolean' } }, ['firstAdminNeeded'])], open: true }),
  },
  '/admin/api/session/password': {
    post: op('changePassword', { summary: 'Change one’s own password: every session of the person ends; this browser gets a new one.', body: object({ current: str, password: str }, ['current', 'password']), ok: ['204', 'Changed.'] }),
  },
  '/admin/api/welcome/{code}': withPath([{ $ref: '#/components/parameters/inviteCode' }], {
    get: op('invitation', { summary: 'Whom an invitation is for.', ok: ['200', 'The person.', object({ email: str, name: str })], open: true, errors: ['AdminNotFound'] }),
    post: op('acceptInvitation', { summary: 'Set one’s password from an invitation, and sign in.', body: object({ password: str }, ['password']), ok: ['204', 'Signed in.'], open: true, errors: ['AdminNotFound', 'AdminInvalid', 'AdminBodyTooLarge', 'AdminMediaType'] }),
  }),
  '/admin/api/people': {
    get: op('listPeople', { summary: 'Everyone with an account (admins).', ok: ['200', 'The people.', list('people', ref('schemas/Person'))] }),
    post: op('addPerson', { summary: 'Add a person; answers an invitation link to set a password, unless one was given.', body: ref('schemas/PersonInput'), ok: ['201', 'Added.', object({ person: ref('schemas/Person'), invitation: ref('schemas/Invitation') })], errors: ['AdminConflict'] }),
  },
  '/admin/api/people/{person}': withPath([{ $ref: '#/components/parameters/personId' }], {
    patch: op('updatePerson', { summary: 'Change a person’s e-mail, name, role or tracker grants (grants replaced whole); a narrowing ends their sessions, a new e-mail does not.', body: ref('schemas/PersonInput'), ok: ['200', 'The person.', ref('schemas/Person')], errors: ['AdminNotFound', 'AdminConflict'] }),
    delete: op('removePerson', { summary: 'Remove a person: sessions end, personal tokens go.', ok: ['200', 'Removed.', object({ removed: ref('schemas/Person') })], errors: ['AdminNotFound', 'AdminConflict'] }),
  }),
  '/admin/api/people/{person}/reset-password': withPath([{ $ref: '#/components/parameters/personId' }], {
    post: op('resetPassword', { summary: 'Clear a person’s password (sessions end) and answer a new invitation.', ok: ['200', 'The invitation.', object({ invitation: ref('schemas/Invitation') })], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/tokens': {
    get: op('listTokens', { summary: 'One’s own tokens (an admin: every token), by prefix, with their last use.', ok: ['200', 'The tokens.', list('tokens', ref('schemas/ApiToken'))] }),
    post: op('createToken', { summary: 'A personal token: the owner’s rights narrowed by scopes and trackers; the token is in this answer only.', body: ref('schemas/TokenInput'), ok: ['201', 'Made.', object({ token: str, view: ref('schemas/ApiToken') })] }),
  },
  '/admin/api/service-tokens': {
    post: op('createServiceToken', { summary: 'A service token with its own grants (admins); the token is in this answer only.', body: ref('schemas/TokenInput'), ok: ['201', 'Made.', object({ token: str, view: ref('schemas/ApiToken') })] }),
  },
  '/admin/api/tokens/{token}': withPath([{ $ref: '#/components/parameters/apiTokenId' }], {
    delete: op('revokeApiToken', { summary: 'Revoke a token (its owner, the token itself, or an admin).', ok: ['200', 'Revoked.', object({ revoked: ref('schemas/ApiToken') })], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/access/break-glass': {
    get: op('breakGlass', { summary: 'Whether the admin token still opens the relay.', ok: ['200', 'The setting.', object({ enabled: { type: 'boolean' } }, ['enabled'])] }),
    put: op('setBreakGlass', { summary: 'Switch the admin token off (or on).', body: object({ enabled: { type: 'boolean' } }, ['enabled']), ok: ['200', 'The setting.', object({ enabled: { type: 'boolean' } }, ['enabled'])], errors: ['AdminConflict'] }),
  },
  '/admin/api/audit': {
    get: op('audit', { summary: 'The audit log, newest first.', query: auditQuery, ok: ['200', 'The entries.', list('entries', ref('schemas/AuditEntry'))] }),
  },
  '/admin/api/audit/export': {
    get: op('exportAudit', { summary: 'The audit log as JSON lines, oldest first.', query: [{ name: 'since', in: 'query', description: 'ISO 8601; default: all that is kept.', schema: { type: 'string', format: 'date-time' } }], ok: ['200', 'One entry a line.', ref('schemas/AuditEntry')], content: 'application/x-ndjson' }),
  },
  '/admin/api/trackers/{id}/audit': withPath([tracker], {
    get: op('trackerAudit', { summary: 'The audit entries of one tracker (its editors).', query: auditQuery, ok: ['200', 'The entries.', list('entries', ref('schemas/AuditEntry'))] }),
  }),
  '/admin/api/trackers': {
    get: op('listTrackers', {
      summary: 'Every tracker, with its tokens.',
      description: 'Trackers the relay cannot read (a secret that does not open, stored JSON that is not a tracker) are listed apart under `unreadable`, with the reason (docs/operating.md, "Trackers that cannot be read").',
      ok: ['200', 'The trackers.', object({ trackers: { type: 'array', items: ref('schemas/Tracker') }, unreadable: { type: 'array', items: object({ id: str, reason: str }, ['id', 'reason']) } }, ['trackers', 'unreadable'])],
    }),
    post: op('createTracker', {
      summary: 'Create a tracker; answers its first token and integration view.',
      body: ref('schemas/TrackerInput'),
      ok: ['201', 'Created.', object({ tracker: ref('schemas/Tracker'), token: str, integration: ref('schemas/IntegrationView') })],
      errors: ['AdminConflict'],
    }),
  },
  '/admin/api/trackers/{id}': withPath([tracker], {
    get: op('getTracker', { summary: 'A tracker.', ok: ['200', 'The tracker.', ref('schemas/Tracker')], errors: ['AdminNotFound'] }),
    patch: op('updateTracker', { summary: 'Change a tracker’s settings.', body: ref('schemas/TrackerInput'), ok: ['200', 'The tracker.', ref('schemas/Tracker')], errors: ['AdminNotFound'] }),
    delete: op('removeTracker', {
      summary: 'Remove a tracker (an admin’s): its tokens stop at once; its destinations, their queued records and dead letters, its backlog and its records not yet routed are discarded. Every role and token limit on it is taken away, so that a tracker made later with the same id is not open to them. Archive files and a local warehouse file stay.',
      ok: ['200', 'Removed, with what was discarded.', object({ removed: str, destinations: { type: 'array', items: str }, discarded: object({ queued: int, deadLetters: int, backlog: int }, ['queued', 'deadLetters', 'backlog']), revoked: object({ people: int, tokens: int }, ['people', 'tokens']) }, ['removed', 'destinations', 'discarded', 'revoked'])],
      errors: ['AdminNotFound'],
    }),
  }),
  '/admin/api/trackers/{id}/privacy-rules': withPath([tracker], {
    post: op('setPrivacyRule', {
      summary: 'Add or replace the personal-data rule of a property (applied at the ingest edge, before Redis).',
      body: object({ property: { type: 'string', description: 'A top-level property, a JSON pointer into the properties (`*` for every key or element), `_uid`, `_sid` or `_ip`.' }, action: { type: 'string', enum: ['drop', 'hash', 'truncate-ip', 'mask-email'] } }, ['property', 'action']),
      ok: ['200', 'The tracker.', ref('schemas/Tracker')],
      errors: ['AdminNotFound'],
    }),
    delete: op('removePrivacyRule', {
      summary: 'Remove the rule of a property.',
      query: [{ name: 'property', in: 'query', required: true, description: 'The rule’s property, as set (a JSON pointer’s slashes would be path segments).', schema: { type: 'string', minLength: 1 } }],
      ok: ['200', 'The tracker.', ref('schemas/Tracker')],
      errors: ['AdminNotFound'],
    }),
  }),
  '/admin/api/trackers/{id}/tokens': withPath([tracker], {
    post: op('addToken', { summary: 'Add a token; the old ones keep working.', ok: ['201', 'The tracker and the new token.', object({ tracker: ref('schemas/Tracker'), token: str })], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/trackers/{id}/tokens/{token}': {
    parameters: [tracker, { name: 'token', in: 'path', required: true, description: 'The whole token, or at least its first 8 characters.', schema: str }],
    delete: op('revokeToken', { summary: 'Revoke a token (the last active one cannot be).', ok: ['200', 'The tracker.', object({ tracker: ref('schemas/Tracker'), alreadyRevoked: { type: 'boolean' } })], errors: ['AdminNotFound', 'AdminConflict'] }),
  },
  '/admin/api/trackers/{id}/integration': withPath([tracker], {
    get: op('integrationView', { summary: 'Every endpoint URL with the oldest active token filled in, and curl examples.', ok: ['200', 'The view.', ref('schemas/IntegrationView')], errors: ['AdminNotFound', 'AdminConflict'] }),
  }),
  '/admin/api/trackers/{id}/destinations': withPath([tracker], {
    get: op('listDestinations', {
      summary: 'The destinations with their delivery status; `backlog`: records waiting for a first destination; `archive`: what the tracker’s archive holds (the history backfills read).',
      ok: ['200', 'The destinations.', object({ destinations: { type: 'array', items: ref('schemas/DestinationView') }, backlog: int, archive: ref('schemas/ArchiveStatus') })],
      errors: ['AdminNotFound'],
    }),
    post: op('addDestination', {
      summary: 'Add a destination; its settings are checked by the connector’s schema.',
      body: object({ type: str, id: str, settings: { type: 'object' }, enabled: { type: 'boolean' }, rules: ref('schemas/DestinationRules') }, ['type']),
      ok: ['201', 'The destination.', ref('schemas/Destination')],
      errors: ['AdminNotFound', 'AdminConflict'],
    }),
  }),
  '/admin/api/trackers/{id}/destinations/test-settings': withPath([tracker], {
    post: op('testDestinationSettings', {
      summary: 'The test of a destination before it is saved: its settings checked as saving checks them, then the same round trip as a saved one’s test. Nothing is stored. With `id` of a saved destination, `[redacted]` keeps its stored secret.',
      body: object({ type: str, id: str, settings: { type: 'object' } }, ['type']),
      ok: ['200', 'The result, failing or not; a failure says the next step to take.', object({ ok: { type: 'boolean' }, notes: { type: 'array', items: str }, error: object({ kind: str, message: str }) })],
      errors: ['AdminNotFound'],
    }),
  }),
  '/admin/api/trackers/{id}/destinations/{dest}': withPath([tracker, dest], {
    patch: op('updateDestination', { summary: 'Replace settings or rules (`rules: null` removes them), enable or disable; `[redacted]` keeps a stored secret.', body: object({ settings: { type: 'object' }, enabled: { type: 'boolean' }, rules: { oneOf: [ref('schemas/DestinationRules'), { type: 'null' }] } }), ok: ['200', 'The destination.', ref('schemas/Destination')], errors: ['AdminNotFound'] }),
    delete: op('removeDestination', { summary: 'Remove a destination with its queued records and dead letters.', ok: ['200', 'What was discarded.', object({ removed: str, discarded: object({ queued: int, deadLetters: int }) })], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/trackers/{id}/destinations/{dest}/backfill': withPath([tracker, dest], {
    post: op('startBackfill', {
      summary: 'Send the tracker’s archived records of a time range (`_received_at`) to the destination again, through its rules, in a lane that yields to live records.',
      body: object({ since: { type: 'string', format: 'date-time' }, until: { type: 'string', format: 'date-time' }, resources: { type: 'array', items: { enum: ['events', 'users', 'sessions'] }, description: 'What to send; default all three (users and sessions as they are now).' } }),
      ok: ['202', 'The backfill, started.', ref('schemas/Backfill')],
      errors: ['AdminNotFound', 'AdminConflict'],
    }),
    get: op('backfillProgress', { summary: 'The destination’s backfill under way, or the last one.', ok: ['200', 'The backfill.', ref('schemas/Backfill')], errors: ['AdminNotFound'] }),
    delete: op('cancelBackfill', { summary: 'Cancel the backfill under way; what its lane holds is still delivered.', ok: ['200', 'Whether one was under way.', object({ cancelled: { type: 'boolean' } })], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/trackers/{id}/rules/preview': withPath([tracker], {
    post: op('previewRules', {
      summary: 'Run destination rules over the tracker’s last records (as accepted): a destination’s saved rules, or `rules` given to try before saving.',
      body: object({ destination: str, rules: ref('schemas/DestinationRules'), limit: { type: 'integer', minimum: 1, maximum: 1000 } }),
      ok: ['200', 'What each record would become, with the counts.', ref('schemas/RulesPreview')],
      errors: ['AdminNotFound'],
    }),
  }),
  '/admin/api/trackers/{id}/destinations/{dest}/test': withPath([tracker, dest], {
    post: op('testDestination', { summary: 'A harmless round trip to the destination.', ok: ['200', 'The result, failing or not.', object({ ok: { type: 'boolean' }, notes: { type: 'array', items: str }, error: object({ kind: str, message: str }) })], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/trackers/{id}/destinations/{dest}/traffic': withPath([tracker, dest], {
    get: op('destinationTraffic', { summary: 'The destination’s last 24 hours: delivered and dead-lettered per minute, backlog and lag sampled each minute, and the moments it paused, failed, recovered, was disabled or enabled.', ok: ['200', 'The picture.', ref('schemas/DestinationPicture')], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/trackers/{id}/destinations/{dest}/dead-letters': withPath([tracker, dest], {
    get: op('listDeadLetters', {
      summary: 'Dead letters, oldest first.',
      query: [
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
        { name: 'after', in: 'query', description: 'The entry id to continue after (`1718000000000-0`).', schema: str },
      ],
      ok: ['200', 'A page of dead letters.', object({ total: int, entries: { type: 'array', items: ref('schemas/DeadLetter') } })],
      errors: ['AdminNotFound'],
    }),
  }),
  '/admin/api/trackers/{id}/destinations/{dest}/dead-letters/replay': withPath([tracker, dest], {
    post: op('replayDeadLetters', { summary: 'Queue dead letters for delivery again.', body: entryIds, ok: ['200', 'How many.', object({ replayed: int, destinationEnabled: { type: 'boolean' } })], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/trackers/{id}/destinations/{dest}/dead-letters/discard': withPath([tracker, dest], {
    post: op('discardDeadLetters', { summary: 'Delete dead letters.', body: entryIds, ok: ['200', 'How many.', object({ discarded: int })], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/trackers/{id}/sources': withPath([tracker], {
    get: op('listSources', { summary: 'Webhook sources with their URL and secret.', ok: ['200', 'The sources.', list('sources', ref('schemas/Source'))], errors: ['AdminNotFound'] }),
    post: op('addSource', { summary: 'Add a webhook source; a refused setting is named in `field`.', body: sourceInput, ok: ['201', 'The source with its URL.', ref('schemas/Source')], errors: ['AdminNotFound', 'AdminConflict'] }),
  }),
  '/admin/api/trackers/{id}/sources/{source}': withPath([tracker, source], {
    get: op('getSource', { summary: 'A source with its URL.', ok: ['200', 'The source.', ref('schemas/Source')], errors: ['AdminNotFound'] }),
    patch: op('updateSource', { summary: 'Replace the mapping.', body: object({ mapping: { type: 'object' } }, ['mapping']), ok: ['200', 'The source.', ref('schemas/Source')], errors: ['AdminNotFound'] }),
    delete: op('removeSource', { summary: 'Remove a source: its URL answers 404 from then on.', ok: ['200', 'Removed.', object({ removed: str })], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/trackers/{id}/sources/{source}/rotate-secret': withPath([tracker, source], {
    post: op('rotateSourceSecret', { summary: 'A new secret; the previous one works for the grace period.', body: object({ secret: str, graceHours: { type: 'number', minimum: 0 } }), ok: ['200', 'The source.', ref('schemas/Source')], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/trackers/{id}/sources/{source}/deliveries': withPath([tracker, source], {
    get: op('sourceDeliveries', { summary: 'The last 50 deliveries with their verdicts, newest first.', ok: ['200', 'The deliveries.', list('deliveries', { type: 'object' })], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/health': {
    get: op('health', { summary: 'The relay as a whole: Redis memory against its budget (used, limit, watermarks, state).', ok: ['200', 'The memory snapshot.', object({ memory: { type: 'object' } }, ['memory'])] }),
  },
  '/admin/api/connectors': {
    get: op('listConnectors', {
      summary: 'Destination types and their settings as JSON Schema; `setup`, where a type has one, guides a first setup (the settings to fill first, the key, the steps outside Tributary).',
      ok: [
        '200',
        'The connectors.',
        list(
          'connectors',
          object({
            type: str,
            description: str,
            settingsSchema: { type: 'object' },
            setup: object({
              primary: { type: 'array', items: object({ setting: str, label: str, hint: str }) },
              keySetting: str,
              afterKey: str,
              splits: object({ setting: str, into: { type: 'array', items: str } }),
              steps: { type: 'array', items: object({ text: str, url: str, code: str }) },
            }),
          }),
        ),
      ],
    }),
  },
  '/admin/api/trackers/{id}/query': withPath([tracker], {
    post: op('queryWarehouse', {
      summary: 'Read-only SQL on the tracker’s local warehouse, at most 1 000 rows.',
      body: object({ sql: str, destination: str }, ['sql']),
      ok: ['200', 'The rows.', object({ columns: { type: 'array', items: str }, rows: { type: 'array' }, truncated: { type: 'boolean' } })],
      errors: ['AdminNotFound', 'AdminConflict'],
    }),
  }),
  '/admin/api/trackers/{id}/live': withPath([tracker], {
    get: op('liveRequests', { summary: 'The tracker’s v3 requests as server-sent events (`ready`, then one `request` each).', ok: ['200', 'An event stream.', str], content: 'text/event-stream', errors: ['AdminNotFound'] }),
  }),
  '/admin/api/trackers/{id}/requests': withPath([tracker], {
    get: op('requestHistory', { summary: 'The tracker’s last requests, accepted and refused, newest first, searched.', query: requestQuery, ok: ['200', 'A page of kept requests.', ref('schemas/RequestPage')], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/trackers/{id}/traffic': withPath([tracker], {
    get: op('trackerTraffic', { summary: 'The tracker’s records per minute over the last 24 hours: accepted, duplicates and refused, by endpoint and error code.', ok: ['200', 'The picture.', ref('schemas/TrafficPicture')], errors: ['AdminNotFound'] }),
  }),
  '/admin/api/requests/unknown-token': {
    get: op('unknownTokenRequests', { summary: 'The relay’s requests whose token matched no tracker, newest first, searched.', query: requestQuery, ok: ['200', 'A page of kept requests.', ref('schemas/RequestPage')] }),
  },
};
