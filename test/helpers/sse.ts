/** One server-sent event as the browser's EventSource would dispatch it. */
export interface SseEvent {
  /** `message` when the block names none. */
  event: string;
  /** The `data:` lines, joined by newlines. */
  data: string;
}

/**
 * Reads a `text/event-stream` body as it arrives. `next()` answers the next event, or fails at its
 * deadline or when the stream ends first; `ended` settles when the body finishes.
 */
export class SseReader {
  private readonly queue: SseEvent[] = [];
  private waiter: { resolve: (e: SseEvent) => void; reject: (err: Error) => void } | undefined;
  private done = false;
  private buffer = '';
  /** Resolves when the server ends the stream (or it is aborted). */
  readonly ended: Promise<void>;

  constructor(body: ReadableStream<Uint8Array>) {
    this.ended = this.pump(body);
  }

  /** The next event, within `timeoutMs`. */
  next(timeoutMs = 5000): Promise<SseEvent> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.done) return Promise.reject(new Error('the event stream ended'));
    return new Promise<SseEvent>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(new Error(`no server-sent event within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiter = {
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
    });
  }

  /** Events received and not yet taken by `next()`. */
  pending(): readonly SseEvent[] {
    return this.queue;
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        this.buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
        let end: number;
        while ((end = this.buffer.indexOf('\n\n')) >= 0) {
          const block = this.buffer.slice(0, end);
          this.buffer = this.buffer.slice(end + 2);
          const event = parseBlock(block);
          if (event) this.push(event);
        }
      }
    } catch {
      // Aborted by the test, or the connection dropped: either way the stream is over.
    } finally {
      this.done = true;
      this.waiter?.reject(new Error('the event stream ended'));
      this.waiter = undefined;
    }
  }

  private push(event: SseEvent): void {
    if (this.waiter) {
      const { resolve } = this.waiter;
      this.waiter = undefined;
      resolve(event);
    } else this.queue.push(event);
  }
}

/** A block with no `data:` line (a comment, a bare `retry:`) dispatches nothing, as in EventSource. */
function parseBlock(block: string): SseEvent | undefined {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return data.length > 0 ? { event, data: data.join('\n') } : undefined;
}

export interface SseConnection {
  response: Response;
  reader: SseReader;
  /** Drops the connection, as a closed browser tab would. */
  abort: () => void;
}

/** Opens an event stream with fetch; the caller checks `response.status` before reading. */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: controller.signal });
  if (!response.body) throw new Error('the response has no body');
  return { response, reader: new SseReader(response.body), abort: () => controller.abort() };
}
