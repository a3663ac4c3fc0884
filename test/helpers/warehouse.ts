import { queryWarehouse } from '../../connectors/local';
import { waitFor } from './wait';

/**
 * Polls a local warehouse until `sql`'s first row passes `done`, and returns that row. A read that
 * fails (the writer holds the file, or no batch has created it yet) counts as not yet.
 */
export function waitForWarehouseRow(file: string, sql: string, done: (row: unknown[]) => boolean, message: string, timeoutMs = 90_000): Promise<unknown[]> {
  return waitFor(
    async () => {
      try {
        const row = (await queryWarehouse(file, sql, { lockTimeoutMs: 2000 })).rows[0];
        return row && done(row) ? row : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs, intervalMs: 500, message },
  );
}

/**
 * Users `u0`…`u<users-1>`, each sent `steps` updates `{ step, seen_<step>: true }` in order: each must
 * hold its last step and every `seen_` column (merged, none reverted by an older update).
 */
export async function expectUpdatesInOrder(file: string, users: number, steps: number): Promise<void> {
  const rows = await queryWarehouse(file, 'select _uid, step from users order by _uid', { lockTimeoutMs: 5000 });
  expect(rows.rows).toEqual(Array.from({ length: users }, (_, u) => [`u${u}`, String(steps - 1)]));
  const seen = await queryWarehouse(file, `select count(*)::int from users where ${Array.from({ length: steps }, (_, s) => `seen_${s}`).join(' and ')}`, { lockTimeoutMs: 5000 });
  expect(seen.rows[0]![0]).toBe(users);
}
