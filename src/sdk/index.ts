/**
 * The browser SDK the relay serves at /sdk.js (docs/websites.md). One script tag:
 *
 *   <script async src="https://relay.example.com/sdk.js" data-token="trk_…"></script>
 *
 * It records page views (on load and on single-page-app navigations), keeps an anonymous `_uid`
 * and a `_sid` that rolls over after 30 idle minutes (with a `/v3/session` record of how the visit
 * began), and sends `track`, `identify` and `page` calls in batches that survive reloads, offline
 * periods and leaving the page (outbox.ts). Nothing it does may throw into the host page.
 */
import { uuidv7 } from './ids';
import { Outbox, type Props } from './outbox';
import { currentPage, pageProperties, sessionProperties } from './page-context';
import { readCookie, readJson, writeCookie, writeJson } from './storage';
import { SDK_METHODS } from './methods';

declare const SDK_VERSION: string;

export interface Options {
  token: string;
  /** The relay's base URL; by default where the script was loaded from. */
  api?: string;
  /** A `page_view` on load and on history navigations (default true). */
  autoPage?: boolean;
  /** Clicks on elements with `data-track="event_name"` become events (default true). */
  trackClicks?: boolean;
  /** Nothing is recorded while the browser sends Global Privacy Control or Do Not Track (default false). */
  respectDnt?: boolean;
  /** Nothing is stored or sent until `optIn()` (default false). */
  consentRequired?: boolean;
  /** Keep the ids in a cookie on this domain (e.g. `.example.com`, shared by subdomains) rather than in localStorage. */
  cookieDomain?: string;
  /** Minutes without activity after which a new session starts (default 30). */
  sessionMinutes?: number;
  /** How long a record waits for others before its batch is sent, ms (default 1000). */
  flushMs?: number;
  /** Say on the console what the relay refused (default false). */
  debug?: boolean;
}

/** `_uid`, whether it is the anonymous one, `_sid`, and the last activity's time. */
interface Identity {
  u: string;
  a?: 1;
  s: string;
  t: number;
}

type Call = [string, ArrayLike<unknown>];
/** The methods by name; each takes its own arguments. */
type Api = Record<string, (...args: any[]) => unknown>;
/** `window.tributary`: the snippet's stub (calls queued in `q`) until the SDK replaces it. */
interface Global {
  q?: Call[];
  version?: string;
}

const IDENTITY_KEY = 'trb_id';
const CHOICE_KEY = 'trb_consent';
const TAB_KEY = 'trb_tab';
const METHODS: readonly string[] = SDK_METHODS;

const win = window as unknown as { tributary?: Global };
const script = (document.currentScript ?? document.querySelector('script[data-token][src*="sdk"]')) as HTMLScriptElement | null;

function warnIf(debug: boolean) {
  return (message: string, detail?: unknown) => {
    if (debug) console.warn(`[tributary] ${message}`, detail ?? '');
  };
}

/** A `data-` attribute as a boolean: absent is `fallback`, `"false"`/`"0"`/`"no"` are false. */
function flag(value: string | undefined, fallback: boolean): boolean {
  return value === undefined ? fallback : !/^(false|0|no|off)$/i.test(value);
}

/** The options a `<script data-…>` tag carries. */
function optionsOfScript(): Partial<Options> {
  const d = script ? script.dataset : {};
  const src = script ? script.src.split(/[?#]/)[0]! : '';
  const opts: Partial<Options> = {
    api: d.api ?? src.slice(0, src.lastIndexOf('/')),
    autoPage: flag(d.autoPage, true),
    trackClicks: flag(d.trackClicks, true),
    respectDnt: flag(d.respectDnt, false),
    consentRequired: d.consent === 'required',
    debug: flag(d.debug, false),
  };
  if (d.token) opts.token = d.token;
  if (d.cookieDomain) opts.cookieDomain = d.cookieDomain;
  if (d.sessionMinutes) opts.sessionMinutes = Number(d.sessionMinutes);
  return opts;
}

function tabId(): string {
  try {
    const id = sessionStorage.getItem(TAB_KEY) ?? uuidv7();
    sessionStorage.setItem(TAB_KEY, id);
    return id;
  } catch {
    return uuidv7();
  }
}

function choice(): string | undefined {
  return readJson<string>(CHOICE_KEY);
}

function start(opts: Options): Api {
  const warn = warnIf(!!opts.debug);
  const sessionMs = (opts.sessionMinutes || 30) * 60_000;
  const gpc = (navigator as { globalPrivacyControl?: boolean }).globalPrivacyControl === true || navigator.doNotTrack === '1';
  let memoryIdentity: Identity | undefined;
  let lastPage = '';
  let referrer = document.referrer;

  const optedOut = () => choice() === 'out' || (!!opts.respectDnt && gpc);
  const mayStore = () => !optedOut() && (!opts.consentRequired || choice() === 'in');
  const outbox = new Outbox({ api: (opts.api ?? '').replace(/\/+$/, ''), token: opts.token, flushMs: opts.flushMs ?? 1000, mayStore, warn }, tabId());
  // Before anything is recorded: the tab's previous page may have left records to send.
  outbox.restore();

  function loadIdentity(): Identity | undefined {
    if (!mayStore()) return memoryIdentity;
    return (opts.cookieDomain ? readCookie<Identity>(IDENTITY_KEY) : readJson<Identity>(IDENTITY_KEY)) ?? memoryIdentity;
  }

  function saveIdentity(id: Identity | undefined): void {
    memoryIdentity = id;
    if (!mayStore() && id) return;
    if (opts.cookieDomain) writeCookie(IDENTITY_KEY, id, opts.cookieDomain);
    else writeJson(IDENTITY_KEY, id);
  }

  /** The ids for a record made now; a new session (and its record) when the last one went idle. */
  function touch(): Identity {
    const now = Date.now();
    const id = loadIdentity() ?? { u: uuidv7(), a: 1, s: '', t: 0 };
    const fresh = !id.s || now - id.t > sessionMs;
    if (fresh) id.s = uuidv7();
    id.t = now;
    saveIdentity(id);
    if (fresh) outbox.add('session', { ...sessionProperties(), _id: uuidv7(), _sid: id.s, _uid: id.u });
    return id;
  }

  /** An event with the visitor's ids and the time; the properties may set their own `_id` (a key of theirs). */
  function addEvent(properties: Props): void {
    if (optedOut()) return;
    const id = touch();
    outbox.add('event', { _id: uuidv7(), _uid: id.u, _sid: id.s, _event_at: new Date().toISOString(), ...properties } as Props & { _id: string });
  }

  const api: Api = {
    init: () => undefined,
    track(event: string, properties?: Props) {
      addEvent({ ...properties, _event: String(event) });
    },
    identify(uid: string | number, traits?: Props) {
      if (optedOut()) return;
      const id = touch();
      const uidText = String(uid);
      const anonymous = id.a ? id.u : undefined;
      if (id.u !== uidText) {
        id.u = uidText;
        delete id.a;
        saveIdentity(id);
        // The session began before the visitor was known: it is theirs.
        outbox.add('session', { _id: uuidv7(), _sid: id.s, _uid: uidText });
      }
      const user: Props = { _id: uuidv7(), ...traits, _uid: uidText };
      if (anonymous !== undefined) user.anonymous_id = anonymous;
      outbox.add('user', user as Props & { _id: string });
    },
    page(properties?: Props) {
      addEvent({ ...pageProperties(referrer), ...properties, _event: 'page_view' });
    },
    reset() {
      saveIdentity(undefined);
      touch();
    },
    flush: () => outbox.flush(),
    optOut() {
      writeJson(CHOICE_KEY, 'out');
      outbox.clear();
      saveIdentity(undefined);
      try {
        writeJson(IDENTITY_KEY, undefined);
        if (opts.cookieDomain) writeCookie(IDENTITY_KEY, undefined, opts.cookieDomain);
      } catch {
        // Nothing to forget.
      }
    },
    optIn() {
      writeJson(CHOICE_KEY, 'in');
      // What was recorded while consent was pending is stored and sent now.
      saveIdentity(memoryIdentity);
      outbox.restore();
    },
  };

  function navigated(): void {
    const now = currentPage();
    if (now === lastPage) return;
    if (lastPage) referrer = lastPage;
    lastPage = now;
    // After the router's own work: single-page apps set the title once the URL has changed.
    setTimeout(() => api.page!(), 50);
  }

  if (opts.autoPage !== false) {
    for (const method of ['pushState', 'replaceState'] as const) {
      const original = history[method];
      history[method] = function (this: History, ...args: Parameters<History['pushState']>) {
        const result = original.apply(this, args);
        try {
          navigated();
        } catch {
          // Never into the page.
        }
        return result;
      };
    }
    addEventListener('popstate', navigated);
    lastPage = currentPage();
    api.page!();
  }
  if (opts.trackClicks !== false) {
    document.addEventListener(
      'click',
      (e) => {
        const el = e.target instanceof Element ? e.target.closest('[data-track]') : null;
        if (!el) return;
        const props: Props = {};
        for (const a of Array.from(el.attributes)) if (a.name.startsWith('data-track-')) props[a.name.slice(11).replace(/-/g, '_')] = a.value;
        api.track!(el.getAttribute('data-track'), props);
      },
      true,
    );
  }
  addEventListener('pagehide', () => outbox.leave());
  addEventListener('pageshow', (e) => e.persisted && outbox.resume());
  addEventListener('visibilitychange', () => document.visibilityState === 'hidden' && outbox.flush());
  addEventListener('online', () => outbox.online());
  return api;
}

/** Every method guarded: a bug or a hostile argument must never become the page's exception. */
function guarded(api: Api, warn: (m: string, d?: unknown) => void): Api {
  const safe: Api = {};
  for (const name of METHODS) {
    safe[name] = (...args: unknown[]) => {
      try {
        return api[name]!(...args);
      } catch (err) {
        warn(`${name} failed`, err);
        return undefined;
      }
    };
  }
  return safe;
}

function boot(): void {
  const stub = win.tributary;
  if (stub && stub.version) return; // loaded twice
  const queued: Call[] = stub && Array.isArray(stub.q) ? stub.q : [];
  let opts = optionsOfScript();
  for (const [name, args] of queued) if (name === 'init') opts = { ...opts, ...(args[0] as Partial<Options>) };
  let api: Api | undefined;
  const calls: Call[] = queued.filter(([name]) => name !== 'init');
  const run = (name: string, args: ArrayLike<unknown>) => api![name]!(...Array.from(args));
  const begin = (o: Partial<Options>) => {
    if (api || !o.token) return;
    api = guarded(start(o as Options), warnIf(!!o.debug));
    for (const [name, args] of calls.splice(0)) run(name, args);
  };
  // Until a token is known (a tag without data-token waits for `init`), calls wait in order.
  const facade: Api = {};
  for (const name of METHODS) {
    facade[name] =
      name === 'init'
        ? (o: Partial<Options>) => begin({ ...opts, ...o })
        : (...args: unknown[]) => (api ? api[name]!(...args) : void calls.push([name, args]));
  }
  win.tributary = Object.assign(facade, { version: SDK_VERSION });
  try {
    begin(opts);
  } catch (err) {
    warnIf(true)('could not start', err);
  }
}

boot();
