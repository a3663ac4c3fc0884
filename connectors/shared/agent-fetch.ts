import { request as httpRequest, type Agent, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** Options as gaxios and teeny-request pass them to a fetch implementation: the standard ones plus Node's `agent`. */
export type AgentFetchInit = RequestInit & { agent?: Agent | false | null };

/** Statuses whose response has no body: `new Response` refuses one. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * A `fetch` for the Google client libraries that honours the proxy they chose. gaxios (googleapis)
 * and teeny-request (@google-cloud/bigquery) read `HTTPS_PROXY` / `HTTP_PROXY` and `NO_PROXY`
 * themselves and hand the fetch implementation an `agent` (https-proxy-agent, http-proxy-agent)
 * for a URL that goes through the proxy. node-fetch, their default, uses it; Node's own fetch
 * ignores `agent` and would connect directly. So: with an agent, the request goes out through
 * node:http(s) on that agent; without one, through Node's fetch, as before.
 *
 * The node:http path sends the body whole (the libraries' JSON bodies), decodes gzip, deflate and
 * br as fetch does, follows no redirect (Google's APIs answer none) and aborts with `init.signal`.
 */
export async function agentFetch(input: string | URL | Request, init: AgentFetchInit = {}): Promise<Response> {
  const { agent, ...standard } = init;
  if (!agent) return fetch(input, standard);
  const url = new URL(input instanceof Request ? input.url : input);
  const body = await bodyBytes(init.body);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers = Object.fromEntries(new Headers(init.headers));
  if (body) headers['content-length'] = String(body.length);
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = send(url, { method: init.method ?? 'GET', headers, agent, signal: init.signal ?? undefined }, resolve);
    req.once('error', reject);
    req.end(body);
  });
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) responseHeaders.append(name, v);
  }
  const status = res.statusCode ?? 502;
  if (NULL_BODY.has(status) || init.method === 'HEAD') {
    res.resume();
    return new Response(null, { status, statusText: res.statusMessage, headers: responseHeaders });
  }
  return new Response(Readable.toWeb(decoded(res)) as ReadableStream<Uint8Array>, { status, statusText: res.statusMessage, headers: responseHeaders });
}

/** The response body as fetch gives it: content-encoding undone. */
function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : undefined;
  if (!decoder) return res;
  res.once('error', (err) => decoder.destroy(err));
  return res.pipe(decoder);
}

/** Whatever fetch accepts as a body, as bytes (a Request reads every kind: text, bytes, URLSearchParams, streams). */
async function bodyBytes(body: RequestInit['body']): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return Buffer.from(body);
  return Buffer.from(await new Request('http://body.invalid/', { method: 'POST', body, duplex: 'half' } as RequestInit).arrayBuffer());
}
