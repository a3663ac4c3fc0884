import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Site {
  /** `http://127.0.0.1:<port>`: another origin than the relay (another port). */
  origin: string;
  /** Sets the HTML that `path` (without its query) serves from now on. */
  page: (path: string, html: string) => void;
  close: () => Promise<void>;
}

/** A customer's web site on its own origin, serving the pages a test gives it. */
export async function startSite(): Promise<Site> {
  const pages = new Map<string, string>();
  const server = createServer((req, res) => {
    const html = pages.get((req.url ?? '/').split('?')[0]!);
    if (html === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    page: (path, html) => pages.set(path, html),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A page with `head` in its head and `body` in its body. */
export function html(title: string, head: string, body = ''): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>${head}</head><body><h1>${title}</h1>${body}</body></html>`;
}
