import { Job, type Queue } from 'bullmq';
import { INGEST_JOB_NAME, queuedRecordsKey, type IngestJobData, type NewIngestJob } from '../../jobs/routing/ingest-job';
import { DEDUP_SCRIPT } from './dedup';

/** The combined script's name as a command of the producer connection. */
const JOB_ADD_COMMAND = 'tributaryJobAdd';

type RedisArg = string | Buffer | number;

/** The keys and arguments of DEDUP_SCRIPT for a job's keyed records (see src/ingest/dedup.ts). */
export interface DedupCall {
  keys: string[];
  args: RedisArg[];
}

/** Adds one ingest job; resolves with the dedup script's flags, one per keyed record (none without `dedup`). */
export interface JobAdder {
  add(job: NewIngestJob, dedup?: DedupCall): Promise<number[]>;
}

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
 * BullMQ's add of one ingest job, the job's records beside it (jobs/routing/ingest-job.ts
 * `queuedRecordsKey`) and, for keyed records, their deduplication, as one Lua script: one round
 * trip, and atomic — a script's writes are applied, replicated and logged to the append-only file
 * as one block, so a crash keeps all of them or none, and no worker sees the job without its records.
 *
 * The script is BullMQ's own add script, taken from the connection where BullMQ defined it, run as
 * a Lua function whose parameters shadow KEYS and ARGV; the arguments are the ones BullMQ computes,
 * caught from its public add-to-transaction path. Nothing of BullMQ's script is rewritten, so its
 * behaviour is exactly BullMQ's. (A MULTI instead cost ~20 % of an API process's CPU at load,
 * bench/RESULTS.md, mostly in building ioredis' Pipeline, which copies every script BullMQ defines
 * onto itself.)
 */
export class JobAdd implements JobAdder {
  /** The BullMQ script the combined one was built around, once built. */
  private builtFor: string | undefined;
  private readonly jobPrefix: string;

  constructor(private readonly queue: Queue<IngestJobData>) {
    // BullMQ's job key is this prefix and the job id (its add script's `args[1] .. jobId`).
    this.jobPrefix = queue.toKey('');
  }

  async add(job: NewIngestJob, dedup?: DedupCall): Promise<number[]> {
    const call = await this.bullmqAddCall(job.data);
    const client = (await this.queue.getBackend().connection.client) as unknown as ProducerClient;
    if (this.builtFor !== call.name) this.define(client, call);
    const addKeys = this.bullmqKeyCount(client, call.name);
    const keys = dedup ? [...call.args.slice(0, addKeys), ...dedup.keys] : call.args.slice(0, addKeys);
    const head = [String(addKeys), String(call.args.length - addKeys), dedup ? '1' : '0', this.jobPrefix, queuedRecordsKey(''), job.lines];
    const args = dedup ? [...head, ...call.args.slice(addKeys), ...dedup.args] : [...head, ...call.args.slice(addKeys)];
    const [, flags] = (await client.runCommand(JOB_ADD_COMMAND, [keys.length, ...keys, ...args])) as [string, number[]];
    return flags;
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
    if (!call) throw new Error('BullMQ added the job without a script call; the job add does not know this BullMQ version');
    return call;
  }

  private bullmqKeyCount(client: ProducerClient, name: string): number {
    const script = client.scriptsSet[name];
    if (!script || typeof script.numberOfKeys !== 'number') {
      throw new Error(`BullMQ's script ${name} is not defined with a fixed key count on the connection; the job add does not know this BullMQ version`);
    }
    return script.numberOfKeys;
  }

  private define(client: ProducerClient, call: ScriptCall): void {
    this.bullmqKeyCount(client, call.name);
    // numberOfKeys left out: ioredis then takes the key count as the first argument.
    client.defineCommand(JOB_ADD_COMMAND, { lua: combinedScript(client.scriptsSet[call.name]!.lua) });
    this.builtFor = call.name;
  }
}

/**
 * ARGV[1], ARGV[2]: how many of KEYS and of ARGV from the 7th on are BullMQ's; BullMQ's come first
 * in both, the dedup script's follow. ARGV[3]: '1' when the dedup script runs; ARGV[4], ARGV[5]:
 * what comes before and after the job id in its records key (`queuedRecordsKey`); ARGV[6]: the
 * records' lines. Returns the job id and the dedup script's flags.
 * The dedup runs first (its SADD is the script's first write, so a Redis at its memory limit refuses
 * the whole script), then BullMQ's add, then the records' SET.
 */
export function combinedScript(bullmqAddLua: string): string {
  return `local function bullmqAdd(KEYS, ARGV)
${bullmqAddLua}
end
local function dedup(KEYS, ARGV)
${DEDUP_SCRIPT}
end
local addKeys, addArgs, deduplicating, lines = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == '1', ARGV[6]
local ak, aa, dk, da = {}, {}, {}, {}
for i = 1, #KEYS do
  if i <= addKeys then ak[#ak + 1] = KEYS[i] else dk[#dk + 1] = KEYS[i] end
end
for i = 7, #ARGV do
  if i <= addArgs + 6 then aa[#aa + 1] = ARGV[i] else da[#da + 1] = ARGV[i] end
end
local flags = {}
if deduplicating then flags = dedup(dk, da) end
local jobId = bullmqAdd(ak, aa)
if type(jobId) ~= 'string' then return redis.error_reply('BullMQ refused the job: ' .. tostring(jobId)) end
if lines ~= '' then redis.call('SET', ARGV[4] .. jobId .. ARGV[5], lines) end
return {jobId, flags}
`;
}
