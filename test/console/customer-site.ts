import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the customer's page sends: the pixel URL copied from the console, and a beacon to the POST URL. */
export interface CustomerPage {
  pixelUrl: string;
  postUrl: string;
  /** The record the page sends with navigator.sendBeacon, `_token` included. */
  beacon: Record<string, unknown>;
}

export interface CustomerSite {
  origin: string;
  /** Sets what `/` serves from now on. */
  serve: (page: CustomerPage) => void;
  close: () => Promise<void>;
}

function attribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
}

/**
 * A customer's web site on its own origin: its page embeds the tracking pixel and sends a
 * sendBeacon, as a real integration does. `window.beaconQueued` tells whether the browser took the beacon.
 */
export async function startCustomerSite(): Promise<CustomerSite> {
  let page: CustomerPage | undefined;
  const server = createServer((req, res) => {
    if (req.url !== '/' || !page) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>Customer site</title></head><body>
<h1>Customer site</h1>
<img id="pixel" src="${attribute(page.pixelUrl)}" width="1" height="1" alt="">
<script>window.beaconQueued = navigator.sendBeacon(${JSON.stringify(page.postUrl)}, JSON.stringify(${JSON.stringify(page.beacon)}));</script>
</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve: (next) => {
      page = next;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
