const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Context keys are few (a few dozen across the SDKs): each is converted once. */
const snakeNames = new Map<string, string>();
const SNAKE_NAMES_MAX = 2000;

/** `userAgent` → `user_agent`: how Segment's and RudderStack's warehouses name context columns. */
export function snakeCase(name: string): string {
  let snake = snakeNames.get(name);
  if (snake === undefined) {
    snake = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2').toLowerCase();
    // Keys a client makes up without end must not grow the map without end.
    if (snakeNames.size >= SNAKE_NAMES_MAX) snakeNames.clear();
    snakeNames.set(name, snake);
  }
  return snake;
}

/**
 * Context keys that are not columns: `traits` (the user's traits, copied onto every event by
 * RudderStack's SDKs; an identify's traits go to the user instead), and the session hints read
 * for `_sid`.
 */
const NOT_COLUMNS = new Set(['traits', 'sessionId', 'sessionStart']);

/**
 * A message's `context` as flat properties named as Segment's warehouses name them
 * (`context_page_url`, `context_campaign_source`, `context_library_name`, `context_user_agent`):
 * each key, and each key of an object one level down, becomes a column, so a query written
 * against a Segment or RudderStack warehouse reads the same column here, in every destination.
 * Deeper values are kept whole (`context_user_agent_data_brands` is an array).
 */
export function contextColumns(context: Record<string, unknown>, into: Record<string, unknown>): void {
  for (const key of Object.keys(context)) {
    if (NOT_COLUMNS.has(key)) continue;
    const value = context[key];
    if (value === undefined) continue;
    const name = `context_${snakeCase(key)}`;
    if (!isObject(value)) {
      into[name] = value;
      continue;
    }
    for (const sub of Object.keys(value)) {
      if (value[sub] !== undefined) into[`${name}_${snakeCase(sub)}`] = value[sub];
    }
  }
}

const CAMPAIGN_UTM: ReadonlyArray<readonly [string, string]> = [
  ['source', 'utm_source'],
  ['medium', 'utm_medium'],
  ['name', 'utm_campaign'],
  ['term', 'utm_term'],
  ['content', 'utm_content'],
];

/**
 * A new session's record from the context of its first message, with the names the browser
 * SDK's sessions use (`landing_page`, `referrer`, `utm_*`, `language`, `screen`), so sessions from
 * both read alike.
 */
export function sessionProperties(context: Record<string, unknown>, into: Record<string, unknown>): void {
  const page = isObject(context.page) ? context.page : undefined;
  if (typeof page?.url === 'string') into.landing_page = page.url;
  if (typeof page?.referrer === 'string') into.referrer = page.referrer;
  const campaign = isObject(context.campaign) ? context.campaign : undefined;
  for (const [from, to] of CAMPAIGN_UTM) if (typeof campaign?.[from] === 'string') into[to] = campaign[from];
  if (typeof context.locale === 'string') into.language = context.locale;
  const screen = isObject(context.screen) ? context.screen : undefined;
  if (typeof screen?.width === 'number' && typeof screen.height === 'number') into.screen = `${screen.width}x${screen.height}`;
  if (typeof context.userAgent === 'string') into.user_agent = context.userAgent;
}
