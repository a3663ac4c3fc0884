import type { RedisClient } from '../../src/core/redis/cluster';
import type { Destination } from '../../src/core/trackers/types';
import type { RulesCache } from '../../src/core/rules/compile';
import { blockArgs, DESTINATION_KEYS, type StepRecords, destinationKeys, routedBlocks, SHARE_ARGS, shareArgs, TO_DESTINATIONS } from './destination-blocks';
import { duplicatesKey, queuedExact, queuedLines, queuedRecordCount, queuedRecordsKey, recordValuesOf, INGEST_JOB_FORMAT, type QueuedJobData } from './ingest-job';
import { archiveKeys, deliveryKeys, ENSURE_COUNT, recentRecordsKey, trackerBacklogKey } from '../delivery/keys';
import { entryFields, lineTexts, type LineBlock } from './stream-entries';
import { LuaScript } from '../../src/core/redis/lua-script';

/**
 * Adaptive batching for the router: the job in hand and the jobs already waiting right behind it
 * are routed as one run, each tracker partition's records of the run as ONE stream entry per
 * destination. A block compresses better the more records it holds (jobs/routing/stream-entries.ts), so a
 * backlog that builds up while a destination is disabled takes less Redis. Nothing waits for jobs
 * to arrive: an idle queue routes each job as it comes, as before.
 */

/**
 * Jobs of one run at most, the one in hand included. Single-event requests make jobs of ~6
 * records, so 64 jobs are well past the ~20 records where a bigger block stops paying, while the
 * wait list read and the data read behind the job in hand stay small.
 */
export const MAX_RUN_JOBS = 64;
/**
 * Records of one run at most. A block is inflated whole by delivery and by the spiller, and a
 * block of 2 000 typical events (~800 KB of JSON) deflates in a few milliseconds; beyond about 20
 * records a block gains little (about 87 bytes of Redis a record at 20, 66 at 100, bench/RESULTS.md).
 */
export const MAX_RUN_RECORDS = 2000;
/** Bytes of job data read behind the job in hand at most: a bound on one read whatever the jobs hold. */
export const MAX_RUN_BYTES = 1 << 20;

/** One job of a run: its id in the shard's queue, where its records go, and those records. */
export interface RunJob {
  id: number;
  data: QueuedJobData;
  /** The tracker's destinations, as the router's tracker cache has them. */
  destinations: readonly Destination[];
  /** The tracker keeps an archive: its records also go to its archive stream (jobs/history/archiver.ts). */
  archive: boolean;
  /** See Routing. */
  unreadable?: boolean;
  /** See Routing. */
  removed?: boolean;
  /** Its records as a stream block holds them, the duplicates left out (jobs/routing/ingest-job.ts `queuedLines`). */
  lines: LineBlock;
  /** Its texts may hold integers beyond 2^53 (jobs/routing/ingest-job.ts `queuedExact`). */
  exact: boolean;
  /** The indices of its duplicates, left out of `lines`. */
  skip?: ReadonlySet<number> | undefined;
}

/** What `routeRun` did. */
export type RunOutcome =
  /** Routed: the shard's cursor is now the run's last id. */
  | { kind: 'routed' }
  /** The run's first job was routed already (by a worker that died before BullMQ completed it): `cursor` is the last routed id. */
  | { kind: 'routed-before'; cursor: number }
  /** Nothing written: the tracker partition of the job at `index` in the run has a backlog, which must move first. */
  | { kind: 'backlog'; index: number };

/**
 * The records of the job in hand (ARGV[2]), then the data and records of the jobs waiting right
 * behind it in the queue's wait list (KEYS[1]), oldest first: `{records in hand, data, records,
 * data, records, …}`, records nil for a job without a records key (format 1, or none queued).
 * BullMQ LPUSHes a new job and a worker RPOPLPUSHes the oldest (a stalled job is RPUSHed back to
 * that end), whatever the global concurrency, so the oldest waiting jobs are at the list's right
 * end. Only the run of ids ARGV[2]+1, +2, … is taken, up to the first gap: a job outside the wait
 * list (removed, delayed, or still active with a worker that lost its lock) must not be passed
 * over, since the cursor would then declare it routed. ARGV: the queue's job key prefix, the job in
 * hand's id, the most jobs to read behind it (0: none), the most bytes of data and records (checked
 * with HSTRLEN and STRLEN before each read, so a large job is left to BullMQ rather than read
 * twice), what follows a job's key in its records key.
 *
 * KEYS[2], the queue's marker, loses the marker of jobs ready now (member "0"). BullMQ sets it each
 * time it hands a job over, to wake other workers; when that job was the last one waiting, the
 * worker's next blocking wait returned at once on it and the fetch it led to found nothing: two
 * Redis round trips a job wasted whenever the queue drains between jobs (every job, at a steady
 * rate), about 3 µs of the worker's ~45 µs a record with arrays of 100 (bench/RESULTS.md).
 * Nothing is lost by removing it: a job added later sets it again, one waiting already is fetched
 * by BullMQ when this job completes (moveToFinished takes the next job), and a closing router sets
 * it again (router.ts).
 */
const READ_RUN = new LuaScript(`
redis.call('ZREM', KEYS[2], '0')
local inHand = redis.call('GET', ARGV[1] .. ARGV[2] .. ARGV[5])
local out = {inHand or false}
if tonumber(ARGV[3]) == 0 then return out end
local ids = redis.call('LRANGE', KEYS[1], -tonumber(ARGV[3]), -1)
local bytes, expected, budget = inHand and #inHand or 0, tonumber(ARGV[2]) + 1, tonumber(ARGV[4])
for i = #ids, 1, -1 do
  if tonumber(ids[i]) ~= expected then break end
  local key = ARGV[1] .. ids[i]
  bytes = bytes + redis.call('HSTRLEN', key, 'data') + redis.call('STRLEN', key .. ARGV[5])
  if bytes > budget then break end
  local data = redis.call('HGET', key, 'data')
  if not data then break end
  out[#out + 1] = data
  out[#out + 1] = redis.call('GET', key .. ARGV[5]) or false
  expected = expected + 1
end
return out`);

/**
 * Routes a run of jobs, all or nothing. KEYS: the shard's router cursor, then per group (tracker
 * partition) its backlog, its recent records, its archive stream, and each destination's stream,
 * record count, status and pictures' bucket, then the duplicates lists and records keys of the run's jobs. ARGV: the
 * run's first and last job ids, the number of groups, then per group: its destination count, the
 * index in the run of its first job, whether it keeps an archive ('1' or '0'), its blocks and
 * each destination's share of them (jobs/routing/destination-blocks.ts: destinations whose rules differ
 * get different blocks).
 *
 * The cursor check makes a run that was routed already (its first job is not above the cursor)
 * write nothing; since a shard's jobs are routed in id order and the run's ids are contiguous, no
 * later job of the run can have been routed on its own. A group whose backlog is not empty is
 * left to the one-job path, which moves the backlog first: the answer 3 names the earliest job of
 * such a group, and nothing is written. The duplicates lists and the jobs' records are deleted with
 * the routing, so that neither a crash nor a job skipped by the cursor leaves one behind. The first write is a SET,
 * XADD or HINCRBY, so that at Redis's memory limit the whole script is refused (src/core/redis/out-of-memory.ts).
 */
const ROUTE_RUN = new LuaScript(`${ENSURE_COUNT}${TO_DESTINATIONS}
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) <= last then return {0, last} end
local groups, k, a, backlogAt = {}, 2, 4, -1
for g = 1, tonumber(ARGV[3]) do
  local dests, firstJob, archive = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), ARGV[a + 2] == '1'
  if redis.call('XLEN', KEYS[k]) > 0 and (backlogAt < 0 or firstJob < backlogAt) then backlogAt = firstJob end
  local blocks, shares = readBlocks(a + 3)
  groups[g] = {k + 3, dests, blocks, shares, k + 1, archive}
  k = k + 3 + ${DESTINATION_KEYS} * dests
  a = shares + ${SHARE_ARGS} * dests
end
if backlogAt >= 0 then return {3, backlogAt} end
for _, g in ipairs(groups) do
  keepRecent(KEYS[g[5]], g[3])
  if g[6] then keepArchive(KEYS[g[5] + 1], g[3]) end
  for j = 0, g[2] - 1 do toDestination(g[1] + ${DESTINATION_KEYS} * j, g[3], g[4] + ${SHARE_ARGS} * j) end
end
redis.call('SET', KEYS[1], ARGV[2])
for i = k, #KEYS do redis.call('DEL', KEYS[i]) end
return {1, tonumber(ARGV[2])}`);

/** Where a tracker's records go. */
export interface Routing {
  destinations: readonly Destination[];
  archive: boolean;
  /** The tracker cannot be read (and never was by this process): no destinations, its records to its backlog. */
  unreadable?: boolean;
  /** The tracker was removed (TrackerStore.remove): its records are discarded. */
  removed?: boolean;
}

/** What planning a run needs of the router's shard. */
export interface RunSource {
  commands: RedisClient;
  /** The shard's key prefix. */
  prefix: string;
  /** The shard queue's wait list (`queue.keys.wait`). */
  waitKey: string;
  /** The shard queue's marker, which wakes its workers (`queue.keys.marker`; see READ_RUN). */
  markerKey: string;
  /** What a job's id follows in its hash's key (`queue.toKey('')`). */
  jobPrefix: string;
  /** A tracker's destinations and whether it keeps an archive (cached by the router); none for an unknown tracker. */
  routingOf: (trackerId: string) => Promise<Routing>;
}

/** What READ_RUN found: the records of the job in hand, and the jobs waiting right behind it. */
export interface RunRead {
  /** The job in hand's records key, as stored; null when it has none (format 1, no records, or routed already). */
  inHand: Buffer | null;
  behind: Array<{ data: QueuedJobData; lines: Buffer | null }>;
}

/**
 * The records of job `id`, and the jobs waiting right behind it (contiguous ids only, at most
 * `maxJobs` of them and `maxBytes` with the job in hand's records). One Redis round trip.
 */
export async function readRun(source: RunSource, id: number, maxJobs: number, maxBytes: number): Promise<RunRead> {
  // Undecoded: the records go into the streams as the bytes they are (queuedLines).
  const found = (await READ_RUN.runBuffer(source.commands, 2, source.waitKey, source.markerKey, source.jobPrefix, String(id), String(maxJobs), String(maxBytes), queuedRecordsKey(''))) as Array<Buffer | null>;
  const behind: RunRead['behind'] = [];
  for (let i = 1; i + 1 < found.length; i += 2) behind.push({ data: JSON.parse(found[i]!.toString()) as QueuedJobData, lines: found[i + 1] ?? null });
  return { inHand: found[0] ?? null, behind };
}

/**
 * The run that starts at `first`: `first`, then the jobs waiting right behind it (`behind`, from
 * readRun) as long as their tracker has a destination, their format is one this relay reads, their
 * records are there, and the run stays within MAX_RUN_RECORDS (a job that would pass it waits for
 * the next run). One Redis round trip at most: the duplicates lists, when some job has one.
 */
export async function planRun(source: RunSource, first: RunJob, behind: RunRead['behind']): Promise<RunJob[]> {
  const run = [first];
  let records = queuedRecordCount(first.data);
  // One destination list per tracker for the whole run, so that a group's jobs go to the same streams.
  const routings = new Map<string, Routing>([[first.data.trackerId, { destinations: first.destinations, archive: first.archive }]]);
  const taken: Array<{ data: QueuedJobData; lines: Buffer | null; routing: Routing }> = [];
  for (const { data, lines } of behind) {
    // A job this relay cannot read, or whose records are gone (a run routed it already), is left
    // for when it is the job in hand, where it is refused or found routed.
    if (data.v !== undefined && (data.v !== INGEST_JOB_FORMAT || (data.n > 0 && lines === null))) break;
    if (!routings.has(data.trackerId)) routings.set(data.trackerId, await source.routingOf(data.trackerId));
    const routing = routings.get(data.trackerId)!;
    const count = queuedRecordCount(data);
    if (routing.destinations.length === 0 || records + count > MAX_RUN_RECORDS) break;
    records += count;
    taken.push({ data, lines, routing });
  }
  const skips = await readDuplicates(source.commands, source.prefix, taken.map((t) => t.data));
  taken.forEach(({ data, lines, routing }, i) => {
    const id = first.id + 1 + i;
    run.push({ id, data, ...routing, lines: queuedLines(String(id), data, lines, skips[i]), exact: queuedExact(data), skip: skips[i] });
  });
  return run;
}

/** The indices of each job's duplicate records, for every job that has a list, in one MGET. */
export async function readDuplicates(commands: RedisClient, prefix: string, jobs: readonly QueuedJobData[]): Promise<Array<Set<number> | undefined>> {
  const keyed = jobs.flatMap((data, i) => (data.dedup ? [i] : []));
  const out: Array<Set<number> | undefined> = jobs.map(() => undefined);
  if (keyed.length === 0) return out;
  const lists = await commands.mget(...keyed.map((i) => duplicatesKey(prefix, jobs[i]!.dedup!)));
  keyed.forEach((i, n) => {
    const list = lists[n];
    if (list) out[i] = new Set(list.split(',').map(Number));
  });
  return out;
}

/**
 * The records of jobs of one tracker partition as one routing step: their lines as one block, as
 * read (joined when there are several jobs); texts and values only if a destination's rules read them.
 */
export function stepRecords(jobs: readonly RunJob[]): StepRecords {
  const blocks = jobs.map((j) => j.lines).filter((b) => b.count > 0);
  const lines: LineBlock =
    blocks.length === 1 ? blocks[0]! : { bytes: Buffer.concat(blocks.flatMap((b, i) => (i === 0 ? [b.bytes] : [NEWLINE, b.bytes]))), count: blocks.reduce((n, b) => n + b.count, 0) };
  let texts: string[] | undefined;
  return {
    lines,
    get texts() {
      return (texts ??= lineTexts(lines));
    },
    values: () => jobs.flatMap((j) => recordValuesOf(lineTexts(j.lines), j.exact)),
  };
}

const NEWLINE = Buffer.from('\n');

/**
 * Routes `run` (contiguous job ids, oldest first, every tracker with a destination) in one atomic
 * script: per tracker partition, its records of the run in job order as one entry per destination,
 * through each destination's rules (`rules` compiles them once).
 */
export async function routeRun(commands: RedisClient, prefix: string, jobPrefix: string, cursorKey: string, run: readonly RunJob[], rules: RulesCache): Promise<RunOutcome> {
  const groups = new Map<string, { first: number; job: RunJob; jobs: RunJob[] }>();
  run.forEach((job, index) => {
    const name = `${job.data.trackerId}/${job.data.partition ?? 0}`;
    let group = groups.get(name);
    if (!group) groups.set(name, (group = { first: index, job, jobs: [] }));
    group.jobs.push(job);
  });
  const keys: string[] = [cursorKey];
  const args: Array<string | Buffer> = [String(run[0]!.id), String(run.at(-1)!.id), String(groups.size)];
  const at = Date.now();
  for (const { first, job, jobs } of groups.values()) {
    const { trackerId } = job.data;
    const partition = job.data.partition ?? 0;
    keys.push(trackerBacklogKey(prefix, trackerId, partition), recentRecordsKey(prefix, trackerId, partition), archiveKeys(prefix, trackerId, partition).stream);
    for (const d of job.destinations) {
      keys.push(...destinationKeys(deliveryKeys(prefix, { trackerId, destinationId: d.id, partition }), at));
    }
    const routed = routedBlocks(stepRecords(jobs), job.destinations, rules);
    args.push(String(job.destinations.length), String(first), job.archive ? '1' : '0', ...blockArgs(routed, (records) => entryFields(records)), ...shareArgs(routed, at));
  }
  for (const job of run) {
    if (job.data.dedup) keys.push(duplicatesKey(prefix, job.data.dedup));
    if (job.data.v !== undefined && job.data.n > 0) keys.push(queuedRecordsKey(jobPrefix + job.id));
  }
  const [answer, value] = (await ROUTE_RUN.run(commands, keys.length, ...keys, ...args)) as [number, number];
  if (answer === 1) return { kind: 'routed' };
  if (answer === 0) return { kind: 'routed-before', cursor: value };
  return { kind: 'backlog', index: value };
}
