import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConfigurationError, PermanentError, RetryableError } from '../../../connectors/errors';
import { localConnector } from '../../../connectors/local';
import { createLogger } from '../../../src/core/logger';
import { event, openFixture, user, type LocalFixture } from './helpers';

const signal = () => new AbortController().signal;

describe('local connector: per-record outcomes', () => {
  let fx: LocalFixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  it('fails only the record the database refuses and writes the others', async () => {
    const good1 = event('view', { n: 1 });
    const bad = event('view', { n: 2 }, { eventAt: 'not a time' });
    const good2 = user('u1', { a: 1 });
    const good3 = user('u1', { b: 2 });
    const outcomes = await fx.write([good1, bad, good2, good3]);
    expect(outcomes.map((o) => o.status)).toEqual(['ok', 'failed', 'ok', 'ok']);
    const failure = outcomes[1]!;
    expect(failure.status === 'failed' && failure.error).toBeInstanceOf(PermanentError);
    expect(failure.status === 'failed' && failure.error.message).toMatch(/refused this record: Conversion Error/);
    expect(await fx.rows('SELECT _id FROM events')).toEqual([{ _id: good1.id }]);
    expect(await fx.rows('SELECT a, b FROM users')).toEqual([{ a: '1', b: '2' }]);
  });

  it('fails a user without _uid up front', async () => {
    const keyless = { ...user('x', {}), uid: undefined };
    const outcomes = await fx.write([keyless, event('view', {})]);
    expect(outcomes.map((o) => o.status)).toEqual(['failed', 'ok']);
  });

  it('refuses to write once closed, or when the signal has already aborted', async () => {
    const aborted = new AbortController();
    aborted.abort();
    await expect(fx.writer.write([event('v', {})], aborted.signal)).rejects.toBeInstanceOf(RetryableError);
    await fx.writer.close();
    await expect(fx.write([event('v', {})])).rejects.toBeInstanceOf(RetryableError);
  });
});

describe('local connector: test()', () => {
  it('creates the file and the three tables', async () => {
    const fx = await openFixture();
    try {
      await fx.writer.test(signal());
      expect((await stat(fx.file)).isFile()).toBe(true);
      expect(await fx.rows(`SELECT table_name AS t FROM duckdb_tables() ORDER BY t`)).toEqual([{ t: 'events' }, { t: 'sessions' }, { t: 'users' }]);
    } finally {
      await fx.cleanup();
    }
  });

  it('reports a readable ConfigurationError when the directory cannot be written', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'tributary-local-'));
    try {
      // A file where the directory should be: unwritable even for root, unlike chmod.
      await writeFile(path.join(root, 'warehouse'), 'not a directory');
      const writer = await localConnector.open({ trackerId: 'trk', destinationId: 'd', settings: {}, dataDir: root, logger: createLogger('silent'), now: () => new Date() });
      const err = await writer.test(signal()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigurationError);
      expect((err as Error).message).toMatch(/^the local warehouse directory .*warehouse is not writable: /);
      await expect(writer.write([event('v', {})], signal())).rejects.toBeInstanceOf(ConfigurationError);
      await writer.close();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
