import { readFileSync } from 'node:fs';
import type { Agent } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Readable } from 'node:stream';
import { agentFetch } from '../../../connectors/shared/agent-fetch';

/**
 * For jest only. `@google-cloud/bigquery` sends its requests through teeny-request 10, which loads
 * node-fetch 3 (an ES module) with `import()`; jest's CommonJS runtime refuses dynamic imports
 * unless node runs with --experimental-vm-modules. Test files therefore replace teeny-request with
 * its own code in which that one line uses Node's built-in fetch, through this adapter:
 *
 *   jest.mock('teeny-request', () => jest.requireActual('…/fakes/bigquery/jest-transport').teenyRequestOnNativeFetch());
 *
 * Everything above the transport (request building, error parsing, the BigQuery client) is the
 * real library; benchmarks and the CLI run it unmodified, node-fetch included.
 */
interface FetchOptions {
  method?: string;
  headers?: Record<string, string>;
  /** A stream for a media upload (teeny-request's multipart body), which node-fetch reads as it sends. */
  body?: string | Buffer | Readable;
  agent?: Agent | false;
}

async function bodyOf(body: FetchOptions['body']): Promise<string | Buffer | undefined> {
  if (!(body instanceof Readable)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer | string));
  return Buffer.concat(chunks);
}

/**
 * The part of node-fetch 3's Response that teeny-request reads, on Node's fetch. Like node-fetch,
 * it sends through the `agent` teeny-request chose (its keep-alive pool, or a proxy agent for
 * HTTPS_PROXY / HTTP_PROXY outside NO_PROXY), by the connectors' own agentFetch.
 */
async function nodeFetchOnNativeFetch(url: string, options: FetchOptions) {
  const res = await agentFetch(url, { method: options.method, headers: options.headers, body: await bodyOf(options.body), agent: options.agent });
  const bytes = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    statusText: res.statusText,
    url: res.url,
    headers: res.headers,
    body: Readable.from(bytes.length > 0 ? [bytes] : []),
    json: async (): Promise<unknown> => JSON.parse(bytes.toString('utf8')),
    text: async (): Promise<string> => bytes.toString('utf8'),
  };
}

const FETCH_LINE = /const fetch = \(\.\.\.args\) => import\('node-fetch'\)[^\n]*\n/;

export function teenyRequestOnNativeFetch(): unknown {
  const file = require.resolve('teeny-request');
  const source = readFileSync(file, 'utf8');
  if (!FETCH_LINE.test(source)) throw new Error(`teeny-request changed (${file}): update test/fakes/bigquery/jest-transport.ts`);
  const module = { exports: {} };
  const compiled = new Function('exports', 'require', 'module', '__filename', '__dirname', '__nativeFetch', source.replace(FETCH_LINE, 'const fetch = __nativeFetch;\n'));
  compiled(module.exports, createRequire(file), module, file, path.dirname(file), nodeFetchOnNativeFetch);
  return module.exports;
}
