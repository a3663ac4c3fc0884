import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * Runs a full garbage collection every `everyMs` until the returned function is called, as
 * `node --expose-gc` with frequent collections would: a timeout whose signal nothing holds
 * strongly (nodejs/node#57736) is collected before it fires. A few collections within the
 * deadline under test are enough; each costs tens of milliseconds of CPU in a test's large heap,
 * so a collection every few milliseconds kept a core busy for the whole test.
 */
export function collectGarbageOften(everyMs: number): () => void {
  gc();
  const timer = setInterval(gc, everyMs);
  return () => clearInterval(timer);
}
