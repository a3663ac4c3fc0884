import { Job, type Queue } from 'bullmq';
import { INGEST_JOB_NAME, type IngestJobData } from '../../jobs/routing/ingest-job';
import { DEDUP_SCRIPT } from './dedup';

/** The combined script's name as a command of the producer connection. */
const KEYED_ADD_COMMAND = 'tributaryKeyedAdd';

type RedisArg = string | Buffer | number;

/** One call BullMQ would make to add a job: its script command and the flat keys-then-args list. */
interface ScriptCall {
  name: string;
  args: RedisArg[];
}

/** The parts of ioredis' script registry this module reads (ioredis `Script`). */
interface DefinedScript {
  lua: string;
  numberOfKeys: number | null;
}

/** The producer connection as BullMQ hands it out: ioredis behind BullMQ's adapter. */
interface ProducerClient {
  scriptsSet: Record<string, DefinedScript | undefined>;
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  runCommand(name: string, args: RedisArg[]): Promise<unknown>;
}

/**
 * BullMQ's add of one job and the deduplication of its keyed records, as one Lua script: one round
 * trip like an unkeyed add, and atomic like the MULTI it replaces — a script's writes are applied,
 * replicated and logged to the append-only file as one block, so a crash keeps both or neither.
 *
 * The script is BullMQ's own add script, taken from the connection where BullMQ defined it, run as a
 * Lua function whose parameters shadow KEYS and ARGV; the arguments are the ones BullMQ computes,
 * caught from its public add-to-transaction path. Nothing of BullMQ's script is rewritten, so its
 * behaviour is exactly BullMQ's. A MULTI cost ~20 % of an API process's CPU at load (bench/RESULTS.md),
 * mostly in building ioredis' Pipeline, which copies every script BullMQ defines onto itself.
 */
export class KeyedAdd {
  /** The BullMQ script the combined one was built around, once built. */
  private builtFor: string | undefined;

  constructor(private readonly queue: Queue<IngestJobData>) {}

  /**
   * Adds the job and runs the dedup script with `dedupKeys`/`dedupArgs` (see DEDUP_SCRIPT), first
   * the dedup, then the add. Resolves with the dedup script's flags, one per keyed record.
   */
  async add(data: IngestJobData, dedupKeys: string[], dedupArgs: RedisArg[]): Promise<number[]> {
    const call = await this.bullmqAddCall(data);
    const client = (await this.queue.getBackend().connection.client) as unknown as ProducerClient;
    if (this.builtFor !== call.name) this.define(client, call);
    const addKeys = this.bullmqKeyCount(client, call.name);
    const keys = [...call.args.slice(0, addKeys), ...dedupKeys];
    const args = [String(addKeys), String(call.args.length - addKeys), ...call.args.slice(addKeys), ...dedupArgs];
    return (await client.runCommand(KEYED_ADD_COMMAND, [keys.length, ...keys, ...args])) as number[];
  }

  /** What BullMQ would send to add this job, caught instead of sent. */
  private async bullmqAddCall(data: IngestJobData): Promise<ScriptCall> {
    let call: ScriptCall | undefined;
    const transaction = {
      runCommand(name: string, args: RedisArg[]) {
        call = { name, args };
        return transaction;
      },
    };
    await new Job<IngestJobData>(this.queue, INGEST_JOB_NAME, data, this.queue.defaultJobOptions).addJob(transaction as never);
    if (!call) throw new Error('BullMQ added the job without a script call; the keyed add does not know this BullMQ version');
    return call;
  }

  private bullmqKeyCount(client: ProducerClient, name: string): number {
    const script = client.scriptsSet[name];
    if (!script || typeof script.numberOfKeys !== 'number') {
      throw new Error(`BullMQ's script ${name} is not defined with a fixed key count on the connection; the keyed add does not know this BullMQ version`);
    }
    return script.numberOfKeys;
  }

  private define(client: ProducerClient, call: ScriptCall): void {
    this.bullmqKeyCount(client, call.name);
    // numberOfKeys left out: ioredis then takes the key count as the first argument.
    client.defineCommand(KEYED_ADD_COMMAND, { lua: combinedScript(client.scriptsSet[call.name]!.lua) });
    this.builtFor = call.name;
  }
}

/**
 * ARGV[1], ARGV[2]: how many of KEYS and of the remaining ARGV are BullMQ's; BullMQ's come first
 * in both, the dedup script's follow. Returns the dedup script's flags.
 */
export function combinedScript(bullmqAddLua: string): string {
  return `local function bullmqAdd(KEYS, ARGV)
${bullmqAddLua}
end
local function dedup(KEYS, ARGV)
${DEDUP_SCRIPT}
end
local addKeys, addArgs = tonumber(ARGV[1]), tonumber(ARGV[2])
local ak, aa, dk, da = {}, {}, {}, {}
for i = 1, #KEYS do
  if i <= addKeys then ak[#ak + 1] = KEYS[i] else dk[#dk + 1] = KEYS[i] end
end
for i = 3, #ARGV do
  if i <= addArgs + 2 then aa[#aa + 1] = ARGV[i] else da[#da + 1] = ARGV[i] end
end
local flags = dedup(dk, da)
bullmqAdd(ak, aa)
return flags
`;
}
