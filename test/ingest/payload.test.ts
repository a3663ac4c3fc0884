import type { Limits } from '../../src/core/config';
import { ApiError } from '../../src/core/errors';
import { extractPayload, flatParams, type ParsedBody, type RequestParts } from '../../src/ingest/payload';

const limits = { recordsPerRequest: 3 } as Limits;
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const query = (s: string) => flatParams(new URLSearchParams(s));
const none: ParsedBody = { kind: 'none' };
const jsonBody = (value: unknown): ParsedBody => ({ kind: 'json', value });

function extract(parts: Partial<RequestParts>) {
  return extractPayload({ query: {}, body: none, authorization: undefined, ...parts }, limits);
}
function codeOf(parts: Partial<RequestParts>): string {
  try {
    extract(parts);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return (err as ApiError).code;
  }
  throw new Error('expected a refusal');
}
const fieldsOf = (p: ReturnType<typeof extract>, i = 0) => {
  const item = p.items[i]!;
  if ('error' in item) throw new Error(item.error.message);
  return { ...item.fields };
};

describe('flatParams', () => {
  test('strings, and arrays for repeated names, on a null prototype', () => {
    const p = query('a=1&b=x+y&a=2&a=3&__proto__=p&constructor=c');
    expect(Object.entries(p)).toEqual([['a', ['1', '2', '3']], ['b', 'x y'], ['__proto__', 'p'], ['constructor', 'c']]);
    expect(Object.getPrototypeOf(p)).toBeNull();
  });
  test('more than 1000 pairs are all kept', () => {
    const p = query(Array.from({ length: 1500 }, (_, i) => `k${i}=${i}`).join('&'));
    expect(Object.keys(p)).toHaveLength(1500);
  });
});

describe('the mixing rule', () => {
  test('URL parameters alone', () => {
    const p = extract({ query: query('_event=view&x=1') });
    expect(p.batch).toBe(false);
    expect(fieldsOf(p)).toEqual({ _event: 'view', x: '1' });
  });
  test('data= overlays the URL parameters', () => {
    expect(fieldsOf(extract({ query: query(`_event=a&x=1&data=${b64({ _event: 'b', y: 2 })}`) }))).toEqual({ _event: 'b', x: '1', y: 2 });
  });
  test('the body overlays the URL parameters', () => {
    expect(fieldsOf(extract({ query: query('_event=a&x=1'), body: jsonBody({ x: 2 }) }))).toEqual({ _event: 'a', x: 2 });
  });
  test('with a body, data= joins the base and the body overlays both', () => {
    expect(fieldsOf(extract({ query: query(`a=u&data=${b64({ b: 'd', c: 'd' })}`), body: jsonBody({ c: 'body' }) }))).toEqual({ a: 'u', b: 'd', c: 'body' });
  });
  test('a form body overlays like JSON', () => {
    expect(fieldsOf(extract({ query: query('a=u&b=u'), body: { kind: 'form', value: query('b=f') } }))).toEqual({ a: 'u', b: 'f' });
  });
  test('an array: one item per element, the base under each, non-objects reported in place', () => {
    const p = extract({ query: query('src=url'), body: jsonBody([{ a: 1 }, 7, { src: 'own' }]) });
    expect(p.batch).toBe(true);
    expect(fieldsOf(p, 0)).toEqual({ src: 'url', a: 1 });
    expect(p.items[1]).toEqual({ error: expect.objectContaining({ code: 'ERR_INVALID_PAYLOAD' }) });
    expect(fieldsOf(p, 2)).toEqual({ src: 'own' });
  });
  test('merged fields keep __proto__ as data', () => {
    const p = extract({ body: jsonBody(JSON.parse('{"__proto__":{"polluted":1}}')) });
    expect(Object.getOwnPropertyNames(fieldsOf(p))).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('payload shape', () => {
  test.each([
    ['an empty array', { body: jsonBody([]) }, 'ERR_EMPTY_BATCH'],
    ['too many records', { body: jsonBody([{}, {}, {}, {}]) }, 'ERR_TOO_MANY_RECORDS'],
    ['too many records in data=', { query: query(`data=${b64([{}, {}, {}, {}])}`) }, 'ERR_TOO_MANY_RECORDS'],
    ['a scalar body', { body: jsonBody(5) }, 'ERR_INVALID_PAYLOAD'],
    ['a null body', { body: jsonBody(null) }, 'ERR_INVALID_PAYLOAD'],
    ['data= twice', { query: query(`data=${b64({})}&data=${b64({})}`) }, 'ERR_INVALID_FIELD'],
    ['a non-object data= beside a body', { query: query(`data=${b64([1])}`), body: jsonBody({}) }, 'ERR_INVALID_PAYLOAD'],
    ['bad base64', { query: query('data=%%%') }, 'ERR_MALFORMED_BASE64'],
  ] as const)('%s: %s', (_label, parts, code) => {
    expect(codeOf(parts as Partial<RequestParts>)).toBe(code);
  });
});

describe('tokens', () => {
  const T = 'trk_aaaaaaaaaaaaaaaaaaaaaaaaaaaa';
  const U = 'trk_bbbbbbbbbbbbbbbbbbbbbbbbbbbb';

  test.each([
    ['header', { authorization: `Tracker ${T}` }],
    ['header, any case and spacing', { authorization: `TRACKER   ${T} ` }],
    ['query', { query: query(`_token=${T}`) }],
    ['body', { body: jsonBody({ _token: T }) }],
    ['data=', { query: query(`data=${b64({ _token: T })}`) }],
    ['data= beside a body', { query: query(`data=${b64({ _token: T })}`), body: jsonBody({}) }],
    ['form body', { body: { kind: 'form', value: query(`_token=${T}`) } as ParsedBody }],
    ['all places, the same', { authorization: `Tracker ${T}`, query: query(`_token=${T}&_token=${T}`), body: jsonBody([{ _token: T }, { _token: T }]) }],
  ] as const)('%s', (_label, parts) => {
    const p = extract(parts as Partial<RequestParts>);
    expect(p.token).toBe(T);
    for (const item of p.items) expect('fields' in item && '_token' in item.fields).toBe(false);
  });

  test('none', () => {
    expect(extract({ query: query('a=1') }).token).toBeUndefined();
  });

  test.each([
    ['header and body', { authorization: `Tracker ${T}`, body: jsonBody({ _token: U }) }],
    ['header and query', { authorization: `Tracker ${T}`, query: query(`_token=${U}`) }],
    ['body and query', { query: query(`_token=${U}`), body: jsonBody({ _token: T }) }],
    ['two elements', { body: jsonBody([{ _token: T }, { _token: U }]) }],
    ['repeated query parameter', { query: query(`_token=${T}&_token=${U}`) }],
    ['data= and body', { query: query(`data=${b64({ _token: U })}`), body: jsonBody({ _token: T }) }],
  ] as const)('%s differing: ERR_TOKEN_CONFLICT', (_label, parts) => {
    expect(codeOf(parts as Partial<RequestParts>)).toBe('ERR_TOKEN_CONFLICT');
  });

  test.each([
    ['an empty query token', { query: query('_token=') }],
    ['a number in the body', { body: jsonBody({ _token: 5 }) }],
    ['an empty array in the body', { body: jsonBody({ _token: [] }) }],
    ['a Tracker header without a token', { authorization: 'Tracker' }],
    ['a Tracker header with two words', { authorization: `Tracker ${T} ${T}` }],
  ] as const)('%s: ERR_INVALID_TOKEN', (_label, parts) => {
    expect(codeOf(parts as Partial<RequestParts>)).toBe('ERR_INVALID_TOKEN');
  });

  test.each(['Bearer x', 'Basic dXNlcjpwYXNz', 'Trackers x', `Token ${T}`])('the %s scheme is not ours', (authorization) => {
    expect(extract({ authorization, query: query(`_token=${T}`) }).token).toBe(T);
  });
});
