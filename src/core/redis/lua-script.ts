import { createHash } from 'node:crypto';
import type { RedisClient } from './cluster';

type ScriptArg = string | Buffer | number;
type ScriptCommand = (numberOfKeys: number, ...args: ScriptArg[]) => Promise<unknown>;

/**
 * A Lua script that Redis runs by its SHA1 (EVALSHA), sent whole once per connection and again
 * only when Redis answers NOSCRIPT (restarted, failed over, SCRIPT FLUSH): ioredis' own
 * `defineCommand`, registered on a client the first time the script runs there.
 *
 * Why not EVAL: it sends the script's text with every call, and Redis hashes that text every time
 * to find its compiled function. The routing scripts carry the destinations' block writer (several
 * KB); at one ingest job a request (single events) the text was most of what the worker wrote to
 * Redis (bench/RESULTS.md).
 */
export class LuaScript {
  private readonly command: string;

  constructor(readonly lua: string) {
    this.command = `tributary_${createHash('sha1').update(lua).digest('hex')}`;
  }

  /** Runs the script: `numberOfKeys` KEYS first among `args`, then ARGV, as EVAL takes them. */
  run(client: RedisClient, numberOfKeys: number, ...args: ScriptArg[]): Promise<unknown> {
    return this.commandOn(client, this.command).call(client, numberOfKeys, ...args);
  }

  /** As `run`, with the answer's strings as Buffers, undecoded (ioredis' `…Buffer` form of a command). */
  runBuffer(client: RedisClient, numberOfKeys: number, ...args: ScriptArg[]): Promise<unknown> {
    return this.commandOn(client, `${this.command}Buffer`).call(client, numberOfKeys, ...args);
  }

  /** The client's command `name`, defining the script there first (which defines both forms). */
  private commandOn(client: RedisClient, name: string): ScriptCommand {
    const commands = client as unknown as Record<string, ScriptCommand | undefined>;
    if (typeof commands[this.command] !== 'function') client.defineCommand(this.command, { lua: this.lua });
    return commands[name] as ScriptCommand;
  }
}
