import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort } from './ports';
import type { TestDatabase } from './postgres';

const run = promisify(execFile);

/** The newest PostgreSQL installed the Debian way (/usr/lib/postgresql/<version>/bin). */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined) throw new Error(`no PostgreSQL server under ${root} (apt-get install postgresql)`);
  return path.join(root, newest, 'bin');
}

/** initdb and postgres refuse to run as root: as root, they run as the `postgres` OS user. */
const asRoot = process.getuid?.() === 0;

async function pgTool(tool: string, args: readonly string[]): Promise<void> {
  const bin = path.join(binDir(), tool);
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, [...args]];
  await run(file, argv, { timeout: 60_000 });
}

/**
 * A PostgreSQL cluster of the test's own: its own data directory in a temporary directory, on a
 * free port, trust authentication, started and stopped by the test (`pg_ctl`), for tests that stop
 * or crash the server. The machine's shared server on 5432 is never touched.
 */
export class OwnPostgres {
  private running = false;

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  static async start(): Promise<OwnPostgres> {
    const dir = mkdtempSync(path.join(tmpdir(), 'tributary-pg-'));
    if (asRoot) {
      const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres']).toString().trim()));
      chownSync(dir, uid!, gid!);
    }
    const own = new OwnPostgres(dir, await freePort());
    await pgTool('initdb', ['-D', own.dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
    await own.resume();
    return own;
  }

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  /** Where a client connects, as the superuser. */
  get connection(): { host: string; port: number; user: string } {
    return { host: '127.0.0.1', port: this.port, user: 'postgres' };
  }

  /**
   * Starts (again) on the same port and data directory; after an immediate stop, the server
   * replays its WAL first, as after a crash. `fsync=off`: the tests kill the server, never the
   * machine, so the operating system's cache keeps every write that reached it.
   */
  async resume(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    try {
      await pgTool('pg_ctl', ['start', '-D', this.dataDir, '-w', '-t', '60', '-l', path.join(this.dir, 'server.log'), '-o', options]);
    } catch (err) {
      throw new Error(`PostgreSQL did not start: ${(err as Error).message}\n${this.log()}`);
    }
    this.running = true;
  }

  /** `immediate`: the postmaster and every backend end at once, nothing flushed, as in a crash. */
  async stop(mode: 'immediate' | 'fast' = 'immediate'): Promise<void> {
    if (!this.running) return;
    await pgTool('pg_ctl', ['stop', '-D', this.dataDir, '-w', '-m', mode]);
    this.running = false;
  }

  async destroy(): Promise<void> {
    await this.stop('immediate').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The server's log so far, for a failure's message. */
  log(): string {
    try {
      return readFileSync(path.join(this.dir, 'server.log'), 'utf8');
    } catch {
      return '';
    }
  }

  /** Runs statements as the superuser, in `database` (default `postgres`). */
  async asAdmin<T>(fn: (client: Client) => Promise<T>, database = 'postgres'): Promise<T> {
    const client = new Client({ ...this.connection, database });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  }

  /** The rows of one query as the superuser; `undefined` while the server cannot answer. */
  async rows<R>(database: string, sql: string): Promise<R[] | undefined> {
    return this.asAdmin(async (c) => (await c.query(sql)).rows as R[], database).catch(() => undefined);
  }

  /** A database and a least-privilege login role of their own, as test/helpers/postgres.ts makes on the shared server. */
  async createDatabase(label: string): Promise<TestDatabase> {
    const suffix = randomBytes(4).toString('hex');
    const name = `tributary_${label}_${suffix}`;
    const role = `${name}_writer`;
    await this.asAdmin(async (c) => {
      await c.query(`CREATE ROLE "${role}" LOGIN`);
      await c.query(`CREATE DATABASE "${name}"`);
      await c.query(`GRANT CREATE, CONNECT, TEMPORARY ON DATABASE "${name}" TO "${role}"`);
    });
    return {
      name,
      role,
      settings: { host: '127.0.0.1', port: this.port, database: name, user: role },
      drop: async () => {
        await this.asAdmin(async (c) => {
          await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
          await c.query(`DROP ROLE IF EXISTS "${role}"`);
        });
      },
    };
  }
}
