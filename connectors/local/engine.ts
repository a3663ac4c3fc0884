import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { EngineLimits } from '../types';

export type { EngineLimits };

export const DEFAULT_ENGINE_MEMORY_MB = 128;

/** The limits when the host named none: 128 MiB, spilling under `<dataDir>/tmp/duckdb`. */
export function defaultEngineLimits(dataDir: string): EngineLimits {
  return { memoryMb: DEFAULT_ENGINE_MEMORY_MB, tempDirectory: path.join(dataDir, 'tmp', 'duckdb') };
}

let instances = 0;

/**
 * DuckDB options for one instance under `limits`, and what to do once it is closed. Two instances
 * never share a spill directory: one closing would delete the other's files (a query and an export
 * of one warehouse may run at once), hence a directory per instance. DuckDB makes that directory
 * when it first spills, but not its parents.
 */
export async function engineOptions(limits: EngineLimits): Promise<{ options: Record<string, string>; removeSpill: () => Promise<void> }> {
  const spill = path.join(limits.tempDirectory, `${process.pid}-${++instances}`);
  await mkdir(limits.tempDirectory, { recursive: true });
  return {
    options: { memory_limit: `${limits.memoryMb}MiB`, temp_directory: spill },
    removeSpill: () => rm(spill, { recursive: true, force: true }).catch(() => undefined),
  };
}
