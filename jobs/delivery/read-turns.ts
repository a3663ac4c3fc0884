import { compareStreamIds } from './keys';

/**
 * Turns between a delivery loop's reads of its stream and the compactor's passes
 * (jobs/spill/compactor.ts), which both run under the destination's lease in one process. A pass
 * rewrites entries with new ids, so it must leave alone every entry the loop has read (it may hold
 * their records in a batch, by their old ids) and must not apply while a read is under way. It
 * runs only while the loop is stalled (its last write failed, so it waits to try again), since a
 * loop that delivers reads the stream as fast as it fills and there is nothing to gain.
 */
export class StreamReadTurns {
  private turn: Promise<unknown> = Promise.resolve();
  /** The last stream entry the loop has read, ever: the compactor's floor. */
  private readThrough = '0-0';
  private stalled = false;

  /** A read of the stream, with no pass meanwhile; `fn` resolves what it read and the last entry among it. */
  read<T extends { lastEntry: string }>(fn: () => Promise<T>): Promise<T> {
    return this.inTurn(async () => {
      const read = await fn();
      if (compareStreamIds(read.lastEntry, this.readThrough) > 0) this.readThrough = read.lastEntry;
      return read;
    });
  }

  /** Said by the loop: a write failed and it waits (true), or a batch was delivered (false). */
  setStalled(stalled: boolean): void {
    this.stalled = stalled;
  }

  /** Runs `fn` with the floor while the loop is stalled and not reading; undefined, without running it, otherwise. */
  whileStalled<T>(fn: (readThrough: string) => Promise<T>): Promise<T | undefined> {
    if (!this.stalled) return Promise.resolve(undefined);
    return this.inTurn(() => (this.stalled ? fn(this.readThrough) : Promise.resolve(undefined)));
  }

  private inTurn<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn, fn);
    this.turn = run.catch(() => undefined);
    return run;
  }
}
