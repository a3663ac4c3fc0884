/*
 * Writes at the limit. At its memory limit (noeviction), Redis refuses a script only if the
 * script's first write is a command that may grow memory (SET, HSET, XADD…): it checks before the first write so that a
 * script is never half applied, and lets the rest run. Tributary's bookkeeping scripts — tracker
 * changes, leases, cursors, status fields, dead-letter replays — write a few hundred bytes that
 * mostly replace values of the same size, and each starts with this: a DEL (or HDEL, XDEL, XTRIM)
 * of what it is about to replace. So the operator's commands and delivery, which free memory,
 * still run on a full Redis. Records are never written this way: ingest and routing stay refused.
 */

/** Redis refused a write for its memory limit (noeviction at `maxmemory`). */
export function isOutOfMemoryError(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('OOM ');
}

/** What the logs say for any out-of-memory refusal: one line, whatever script or command met it. */
export const OUT_OF_MEMORY_LOG = 'Redis is at its memory limit (maxmemory, noeviction): a write was refused';

/** The operator's words for an out-of-memory refusal: what happened and the way out, without Redis's script names. */
export const OUT_OF_MEMORY_MESSAGE =
  "Redis is at its memory limit (maxmemory): nothing was changed. Free memory (deliver or remove a destination's backlog: `tributary destinations enable|remove`, `tributary dlq discard`), or raise Redis's maxmemory.";
