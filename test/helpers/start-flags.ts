import { readFileSync } from 'node:fs';
import path from 'node:path';

const START_SCRIPTS = { all: 'start', api: 'start:api', worker: 'start:worker' } as const;

/**
 * The node flags package.json's start script of `role` gives the server (`npm start`,
 * `start:api`, `start:worker`), so that a test or a benchmark runs the server as it is started:
 * `node <flags> dist/src/boot/server.js <role>`. V8's heap flags decide how far memory grows.
 */
export function serverNodeFlags(role: keyof typeof START_SCRIPTS): string[] {
  const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const script = pkg.scripts[START_SCRIPTS[role]] ?? '';
  const match = new RegExp(`^node((?: --\\S+)*) dist/src/boot/server\\.js ${role}$`).exec(script);
  if (!match) throw new Error(`package.json's ${START_SCRIPTS[role]} is not "node [--flags] dist/src/boot/server.js ${role}": ${script}`);
  return match[1]!.split(' ').filter(Boolean);
}
