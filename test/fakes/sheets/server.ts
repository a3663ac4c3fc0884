import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { keepIdleConnectionsAsGoogle } from '../keep-alive';
import type { AddressInfo } from 'node:net';
import type { RenderedValue, ValueRenderOption } from './cells';
import { ServiceAccounts } from '../service-accounts';
import { GoogleApiError, internalError, invalidArgument, invalidCredentials, notFound, permissionDenied, quotaExceeded, serviceDisabled, storageQuotaExceeded, unauthenticated, unavailable } from './errors';
import { FaultPlan, isWrite, type SheetsMethod } from './faults';
import { GOOGLE_QUOTAS, QuotaMeter, type QuotaLimits } from './quota';
import { handle, matchRoute, newSpreadsheetId } from './routes';
import type { Sheet } from './sheet';
import { GOOGLE_CELL_LIMIT, Spreadsheet } from './spreadsheet';

/** The scope a token must carry (https://developers.google.com/workspace/sheets/api/scopes). */
const SHEETS_SCOPE = 'https://www.googleapis.com/auth/spreadsheets';

/** The project number in the fake's quota and service-disabled messages. */
const PROJECT_NUMBER = '123456789012';

export interface SheetsFakeOptions {
  /** Milliseconds since the epoch; quota windows follow it. Default `Date.now`. */
  clock?: () => number;
  /** Per-minute quotas. Default Google's: 60 per user and 300 per project, for reads and for writes. */
  quotas?: Partial<QuotaLimits>;
  /** Cells per spreadsheet. Default Google's 10 000 000. */
  cellLimit?: number;
  /** Answer 401 to requests without a bearer token. Default false (emulator style). */
  requireAuth?: boolean;
}

export interface LoggedRequest {
  method: SheetsMethod;
  credential: string;
  status: number;
  at: number;
  range?: string;
}

/**
 * A stateful Sheets API v4 server on 127.0.0.1 for tests and benchmarks. Point googleapis at it
 * with `rootUrl: fake.url`. The credential is the bearer token, or `anonymous` without one; a
 * bearer token that is a JWT must be one a key of `accounts` signed (a self-signed JWT with the
 * Sheets scope), and its credential is the service account's e-mail.
 */
export class SheetsFake {
  readonly spreadsheets = new Map<string, Spreadsheet>();
  readonly faults = new FaultPlan();
  readonly quota: QuotaMeter;
  readonly requests: LoggedRequest[] = [];
  /** Requests an `apply-late` fault applied after their client gave up, in the order they landed. */
  readonly late: LoggedRequest[] = [];
  /** Service accounts and their keys: the signers of the JWTs this API accepts. */
  readonly accounts = new ServiceAccounts();
  /** Credentials answered 403 PERMISSION_DENIED (no access to any spreadsheet: none is shared with them). */
  readonly denied = new Set<string>();
  /**
   * Credentials that may not own files: Google gives service accounts no Drive storage, so their
   * spreadsheets.create is refused (403 "The user's Drive storage quota has been exceeded.") while
   * they read and write spreadsheets shared with them.
   */
  readonly noStorage = new Set<string>();
  /** Answer 403 SERVICE_DISABLED to everything, as when the API is not enabled in the project. */
  apiDisabled = false;
  readonly clock: () => number;
  private readonly hung = new Set<ServerResponse>();
  private readonly cellLimit: number;
  private readonly requireAuth: boolean;

  private constructor(
    private readonly server: Server,
    opts: SheetsFakeOptions,
  ) {
    this.clock = opts.clock ?? Date.now;
    this.quota = new QuotaMeter({ ...GOOGLE_QUOTAS, ...opts.quotas }, PROJECT_NUMBER);
    this.cellLimit = opts.cellLimit ?? GOOGLE_CELL_LIMIT;
    this.requireAuth = opts.requireAuth ?? false;
  }

  static async start(opts: SheetsFakeOptions = {}): Promise<SheetsFake> {
    let fake!: SheetsFake;
    const server = createServer((req, res) => void fake.serve(req, res));
    fake = new SheetsFake(server, opts);
    keepIdleConnectionsAsGoogle(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** Root URL for googleapis' `rootUrl`, ending in `/`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  /** Requests received per method (any outcome). */
  counts(filter: (r: LoggedRequest) => boolean = () => true): Partial<Record<SheetsMethod, number>> {
    const out: Partial<Record<SheetsMethod, number>> = {};
    for (const r of this.requests) if (filter(r)) out[r.method] = (out[r.method] ?? 0) + 1;
    return out;
  }

  /** A spreadsheet made directly (not through the API, so not counted); tabs default to `Sheet1`. */
  createSpreadsheet(title = 'Test', tabs: Array<string | { title: string; rowCount?: number; columnCount?: number }> = ['Sheet1']): Spreadsheet {
    const ss = new Spreadsheet(newSpreadsheetId(), title, this.cellLimit);
    for (const t of tabs) {
      const { title: name, rowCount = 1000, columnCount = 26 } = typeof t === 'string' ? { title: t } : t;
      ss.addSheet({ title: name, gridProperties: { rowCount, columnCount } });
    }
    this.spreadsheets.set(ss.id, ss);
    return ss;
  }

  /** A tab, for a test to inspect or to edit as a person would. */
  sheet(spreadsheetId: string, title: string): Sheet {
    const sheet = this.spreadsheets.get(spreadsheetId)?.sheetByTitle(title);
    if (!sheet) throw new Error(`no tab "${title}" in spreadsheet ${spreadsheetId}`);
    return sheet;
  }

  /** Every value of a tab, trimmed like values.get; not counted as a request. */
  values(spreadsheetId: string, title: string, render: ValueRenderOption = 'UNFORMATTED_VALUE'): RenderedValue[][] {
    const sheet = this.sheet(spreadsheetId, title);
    return sheet.read({ r1: 1, c1: 1, r2: sheet.rowCount, c2: sheet.columnCount }, render);
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const route = matchRoute(req.method ?? 'GET', url.pathname);
    const auth = req.headers.authorization;
    const bearer = auth?.startsWith('Bearer ') ? auth.slice(7) : 'anonymous';
    const signer = ServiceAccounts.isJwt(bearer) ? this.accounts.verify(bearer, SHEETS_SCOPE, this.clock()) : undefined;
    const credential = signer === undefined ? bearer : 'email' in signer ? signer.email : `refused:${signer.refused}`;
    const raw = await readBody(req);
    if (!route) return send(res, notFound().code, notFound().body());
    if (signer && 'refused' in signer) return send(res, 401, invalidCredentials().body());
    const entry: LoggedRequest = { method: route.method, credential, status: 0, at: this.clock(), ...(route.range ? { range: route.range } : {}) };
    this.requests.push(entry);
    const fault = this.faults.take(route.method);
    if (fault?.kind === 'hang') {
      this.hung.add(res);
      res.on('close', () => this.hung.delete(res));
      return;
    }
    if (fault?.kind === 'status') {
      const err = injectedError(fault.status, route.method);
      entry.status = err.code;
      return send(res, err.code, err.body());
    }
    if (fault?.kind === 'apply-late') {
      this.hung.add(res);
      res.on('close', () => this.hung.delete(res));
      await new Promise((resolve) => setTimeout(resolve, fault.afterMs));
      try {
        this.call(route, credential, url.searchParams, raw);
        entry.status = -1;
      } catch (err) {
        entry.status = err instanceof GoogleApiError ? err.code : 500;
      }
      this.late.push(entry);
      req.socket.destroy();
      return;
    }
    let status = 200;
    let payload: unknown;
    try {
      payload = this.call(route, credential, url.searchParams, raw);
    } catch (err) {
      const apiError = err instanceof GoogleApiError ? err : internalError();
      status = apiError.code;
      payload = apiError.body();
    }
    entry.status = status;
    if (fault?.kind === 'lose-response' && status === 200) {
      entry.status = -1;
      req.socket.destroy();
      return;
    }
    send(res, status, payload);
  }

  private call(route: NonNullable<ReturnType<typeof matchRoute>>, credential: string, query: URLSearchParams, raw: string): unknown {
    if (this.requireAuth && credential === 'anonymous') throw unauthenticated();
    if (this.apiDisabled) throw serviceDisabled(PROJECT_NUMBER);
    if (this.denied.has(credential)) throw permissionDenied();
    if (route.method === 'spreadsheets.create' && this.noStorage.has(credential)) throw storageQuotaExceeded();
    const refused = this.quota.take(credential, isWrite(route.method) ? 'write' : 'read', this.clock());
    if (refused) throw refused;
    let body: unknown;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      throw invalidArgument('Invalid JSON payload received.');
    }
    return handle({ route, query, body }, this.spreadsheets, this.cellLimit);
  }
}

/** The answer of a `status` fault: the body Google sends with that status. */
function injectedError(status: number, method: SheetsMethod): GoogleApiError {
  switch (status) {
    case 400:
      return invalidArgument('Invalid values[0][0]: struct_value {}');
    case 429:
      return quotaExceeded(isWrite(method) ? 'Write' : 'Read', 'user', PROJECT_NUMBER);
    case 500:
      return internalError();
    case 503:
      return unavailable();
    default:
      return new GoogleApiError(status, 'UNAVAILABLE', 'Backend error');
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=UTF-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
