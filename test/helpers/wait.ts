/** Polls `check` until it returns a truthy value or the deadline passes. Tests never sleep blindly. */
export async function waitFor<T>(check: () => T | Promise<T>, { timeoutMs = 10_000, intervalMs = 20, message = 'condition' } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await check();
    if (last) return last as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${message} (last: ${JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
