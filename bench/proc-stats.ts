import { readdirSync, readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** Clock ticks per second of /proc/<pid>/stat on Linux (USER_HZ is 100 on every common build). */
const USER_HZ = 100;

/** CPU seconds (user + system) a process has used, or NaN where /proc is not available. */
export function processCpuSeconds(pid: number | undefined): number {
  return pid === undefined ? Number.NaN : cpuSecondsOf(`/proc/${pid}/stat`);
}

/** CPU seconds of a process's main thread alone (its event loop; not V8's helpers, libuv's pool or a native library's threads). */
export function mainThreadCpuSeconds(pid: number | undefined): number {
  return pid === undefined ? Number.NaN : cpuSecondsOf(`/proc/${pid}/task/${pid}/stat`);
}

/** CPU seconds (user and system apart) of each thread of a process, by thread id. */
export function threadCpuSeconds(pid: number | undefined): Map<number, { user: number; system: number }> {
  const threads = new Map<number, { user: number; system: number }>();
  if (pid === undefined) return threads;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.set(Number(tid), { user: Number(fields[11]) / USER_HZ, system: Number(fields[12]) / USER_HZ });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

function cpuSecondsOf(statFile: string): number {
  try {
    const stat = readFileSync(statFile, 'utf8');
    // The command name may hold spaces; fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds all processes of the machine have used (the `cpu` line of /proc/stat), or NaN. */
export function machineCpuSeconds(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    // user nice system idle iowait irq softirq steal …: everything but idle and iowait is busy.
    const [user, nice, system, , , irq, softirq, steal] = line.split(/\s+/).slice(1).map(Number) as number[];
    return (user! + nice! + system! + irq! + softirq! + steal!) / USER_HZ;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds the Redis server has used (INFO cpu), to see how much of the machine it takes. */
export async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const read = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return read('used_cpu_user') + read('used_cpu_sys');
}
