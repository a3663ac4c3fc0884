import { createServer } from 'node:http';
import { serveForParent } from './child';

/**
 * The bare baseline: node:http reads the body, parses the JSON and answers 204. It is what a
 * relay that stores nothing could do at best on this machine; Tributary is measured against it.
 */
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.statusCode = 204;
    } catch {
      res.statusCode = 400;
    }
    res.end();
  });
});
serveForParent(server);
