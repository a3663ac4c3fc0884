import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { encodeFrame, readFrame, scanFrames } from '../../jobs/spill/frames';
import { readWholeEntries } from '../../jobs/delivery/stream-read';
import { entryFields } from '../../jobs/routing/stream-entries';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

/**
 * What the archiver and the spiller frame (and how): whole entries after a cursor, until at least the wanted
 * number of records, read in pages sized by the records per entry seen (imported blocks hold
 * hundreds, live ones a few), whatever the mix.
 */
const prefix = uniquePrefix('stream-read');
const stream = `${prefix}:stream`;
let redis: Redis;

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL);
  // Mixed sizes, as a stream holds them when an import runs beside live traffic: 3 blocks of 500, then 300 single-record entries, then 2 more blocks of 500.
  let n = 0;
  const block = (size: number) => Array.from({ length: size }, () => JSON.stringify({ n: n++ }));
  for (let i = 0; i < 3; i++) await redis.xadd(stream, '*', ...(entryFields(block(500)) as string[]));
  for (let i = 0; i < 300; i++) await redis.xadd(stream, '*', ...(entryFields(block(1)) as string[]));
  for (let i = 0; i < 2; i++) await redis.xadd(stream, '*', ...(entryFields(block(500)) as string[]));
});

afterAll(async () => {
  redis.disconnect();
  await deletePrefix(prefix);
});

const numbers = (entries: Array<{ json: string }>) => entries.map((e) => (JSON.parse(e.json) as { n: number }).n);

test('reads whole entries until the wanted records are in hand, in order, across blocks and single records', async () => {
  const first = await readWholeEntries(redis, stream, '0-0', 1200);
  // Three whole blocks: a frame never ends inside one.
  expect(numbers(first)).toEqual(Array.from({ length: 1500 }, (_, i) => i));

  const second = await readWholeEntries(redis, stream, first.at(-1)!.id, 250);
  expect(numbers(second)).toEqual(Array.from({ length: 250 }, (_, i) => 1500 + i));

  // From the single records into the blocks after them: 50 singles, then a whole block.
  const third = await readWholeEntries(redis, stream, second.at(-1)!.id, 100);
  expect(numbers(third)).toEqual(Array.from({ length: 550 }, (_, i) => 1750 + i));

  const rest = await readWholeEntries(redis, stream, third.at(-1)!.id, 5000);
  expect(numbers(rest)).toEqual(Array.from({ length: 500 }, (_, i) => 2300 + i));
  expect(await readWholeEntries(redis, stream, rest.at(-1)!.id, 5000)).toEqual([]);
});

test('starts inside a block after a cursor there, as a spill that kept part of one does', async () => {
  const all = await readWholeEntries(redis, stream, '0-0', 1);
  expect(all).toHaveLength(500);
  const after = await readWholeEntries(redis, stream, all[199]!.id, 1);
  expect(numbers(after)).toEqual(Array.from({ length: 300 }, (_, i) => 200 + i));
});

test('a frame of more entries than one encoding slice reads back whole and in order', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tributary-frames-'));
  try {
    const entries = Array.from({ length: 1234 }, (_, i) => ({ id: `${1000 + i}-0`, json: JSON.stringify({ n: i, text: 'é'.repeat(i % 7) }) }));
    const file = path.join(dir, 'frames');
    writeFileSync(file, await encodeFrame(entries));
    const { frames, torn } = await scanFrames(file);
    expect(torn).toBe(false);
    expect(frames).toHaveLength(1);
    expect(await readFrame(file, frames[0]!)).toEqual(entries);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
