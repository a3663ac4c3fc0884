import os from 'node:os';
import { ConfigError, loadConfig } from '../../src/core/config';

describe('API_PROCESSES', () => {
  test('defaults to 1, also when empty', () => {
    expect(loadConfig({}).apiProcesses).toBe(1);
    expect(loadConfig({ API_PROCESSES: '' }).apiProcesses).toBe(1);
  });

  test('takes a whole number of processes', () => {
    expect(loadConfig({ API_PROCESSES: '1' }).apiProcesses).toBe(1);
    expect(loadConfig({ API_PROCESSES: '2' }).apiProcesses).toBe(2);
    expect(loadConfig({ API_PROCESSES: ' 12 ' }).apiProcesses).toBe(12);
  });

  test('auto is one per CPU', () => {
    expect(loadConfig({ API_PROCESSES: 'auto' }).apiProcesses).toBe(os.availableParallelism());
    expect(loadConfig({ API_PROCESSES: 'AUTO' }).apiProcesses).toBe(os.availableParallelism());
  });

  test.each(['0', '-1', '1.5', '2e1', 'two', '0x2', '02', 'auto2', '10000'])('refuses %p, naming the variable', (value) => {
    expect(() => loadConfig({ API_PROCESSES: value })).toThrow(ConfigError);
    expect(() => loadConfig({ API_PROCESSES: value })).toThrow(/API_PROCESSES: an integer from 1 to 9999, or auto/);
  });
});

describe('Redis memory budget', () => {
  test('defaults: no limit of its own, spill 60 %, warn 80 %, high 90 %, resume 85 %, sampled every second', () => {
    expect(loadConfig({}).memory).toEqual({ limitBytes: undefined, warnPercent: 80, highPercent: 90, resumePercent: 85, spillPercent: 60, sampleMs: 1000 });
    expect(loadConfig({ REDIS_MAXMEMORY_BYTES: '4294967296' }).memory.limitBytes).toBe(4_294_967_296);
  });

  test('refuses watermarks out of order, a limit below 1 MiB, a percent of 100', () => {
    expect(() => loadConfig({ REDIS_MEMORY_RESUME_PERCENT: '95' })).toThrow(/must not be above REDIS_MEMORY_HIGH_PERCENT/);
    expect(() => loadConfig({ REDIS_MEMORY_WARN_PERCENT: '92' })).toThrow(/must not be above REDIS_MEMORY_HIGH_PERCENT/);
    expect(() => loadConfig({ REDIS_MEMORY_SPILL_PERCENT: '95' })).toThrow(/must not be above REDIS_MEMORY_HIGH_PERCENT/);
    expect(() => loadConfig({ REDIS_MAXMEMORY_BYTES: '1000' })).toThrow(/REDIS_MAXMEMORY_BYTES/);
    expect(() => loadConfig({ REDIS_MEMORY_HIGH_PERCENT: '100' })).toThrow(/REDIS_MEMORY_HIGH_PERCENT/);
  });
});

describe('local warehouse engine', () => {
  test('defaults: 128 MiB per open warehouse, spilling under DATA_DIR/tmp/duckdb', () => {
    expect(loadConfig({ DATA_DIR: '/srv/tributary' }).warehouse).toEqual({ memoryMb: 128, maxMemoryMb: 1024, tempDirectory: '/srv/tributary/tmp/duckdb' });
    expect(loadConfig({ WAREHOUSE_MEMORY_MB: '2048', WAREHOUSE_TEMP_DIR: '/fast/tmp' }).warehouse).toEqual({ memoryMb: 2048, maxMemoryMb: 2048, tempDirectory: '/fast/tmp' });
    expect(loadConfig({ WAREHOUSE_MEMORY_MAX_MB: '512' }).warehouse.maxMemoryMb).toBe(512);
  });

  test('refuses less than 16 MiB', () => {
    expect(() => loadConfig({ WAREHOUSE_MEMORY_MB: '8' })).toThrow(/WAREHOUSE_MEMORY_MB/);
  });
});
