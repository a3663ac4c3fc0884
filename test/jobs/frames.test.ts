import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { encodeFrame, encodePartsFrame, FrameCorruptError, FrameVersionError, partsSpan, readFrame, scanFrames, type FramePart } from '../../jobs/spill/frames';
import { entryBlock, entryFields } from '../../jobs/routing/stream-entries';

/**
 * Frames of format 2 (TSP2): stream blocks kept byte for byte beside runs of lines, read back as
 * the same records with the ids the stream gave them, in one file with frames of format 1.
 */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tributary-frames-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const texts = (from: number, n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ n: from + i, text: 'é\t"x"'.repeat((from + i) % 3) }));

function blockPart(entryId: string, records: string[]): FramePart {
  const block = entryBlock(entryFields(records))!;
  return { block: { entryId, count: block.count, bytes: block.bytes } };
}

test('parts read back in order: lines, blocks with their entry ids, lines again, after a frame of format 1 in the same file', async () => {
  const v1 = [{ id: '900-0', json: '{"old":true}' }];
  const parts: FramePart[] = [
    { lines: [{ id: '1000-0', json: texts(0, 1)[0]! }, { id: '1001-0#0', json: texts(1, 1)[0]! }] },
    blockPart('1002-0', texts(2, 40)),
    blockPart('1003-5', texts(42, 1)),
    { lines: [{ id: '1004-0', json: texts(43, 1)[0]! }] },
  ];
  const file = path.join(dir, 'frames');
  writeFileSync(file, Buffer.concat([await encodeFrame(v1), await encodePartsFrame(parts)]));

  const { frames, torn } = await scanFrames(file);
  expect(torn).toBe(false);
  expect(frames.map(({ firstId, lastId, count }) => ({ firstId, lastId, count }))).toEqual([
    { firstId: '900-0', lastId: '900-0', count: 1 },
    { firstId: '1000-0', lastId: '1004-0', count: 44 },
  ]);
  expect(partsSpan(parts)).toEqual({ first: '1000-0', last: '1004-0', count: 44 });
  expect(await readFrame(file, frames[0]!)).toEqual(v1);
  const records = await readFrame(file, frames[1]!);
  expect(records.map((r) => r.json)).toEqual(texts(0, 44));
  expect(records.map((r) => r.id)).toEqual(['1000-0', '1001-0#0', ...Array.from({ length: 40 }, (_, k) => `1002-0#${k}`), '1003-5#0', '1004-0']);
});

test('a block whose records disagree with its count, or a part of an unknown kind, is damage, not a guess', async () => {
  const file = path.join(dir, 'frames');
  const block = entryBlock(entryFields(texts(0, 5)))!;
  writeFileSync(file, await encodePartsFrame([{ block: { entryId: '1-0', count: 6, bytes: block.bytes } }]));
  const [frame] = (await scanFrames(file)).frames;
  await expect(readFrame(file, frame!)).rejects.toThrow(new FrameCorruptError(`the frame at ${file}:0 holds a block of 5 records that says 6`));

  // The payload's first byte is the first part's tag; the checksum is made again to reach the parser.
  const good = await encodePartsFrame([{ lines: [{ id: '1-0', json: '{}' }] }]);
  const metaLength = good.readUInt16BE(4);
  const payloadAt = 18 + metaLength;
  const bad = Buffer.from(good);
  bad[payloadAt] = 0x51;
  const { createHash } = await import('node:crypto');
  createHash('sha256').update(bad.subarray(18)).digest().subarray(0, 8).copy(bad, 10);
  writeFileSync(file, bad);
  const [badFrame] = (await scanFrames(file)).frames;
  await expect(readFrame(file, badFrame!)).rejects.toThrow('holds a part of unknown kind 81 at byte 0');
});

test('a frame of format 3 is refused by name and the file is left as it is', async () => {
  const file = path.join(dir, 'frames');
  const bytes = await encodePartsFrame([{ lines: [{ id: '1-0', json: '{}' }] }]);
  bytes.write('TSP3', 0, 'latin1');
  writeFileSync(file, bytes);
  const refused = await scanFrames(file).then(() => undefined, (err: unknown) => err);
  expect(refused).toBeInstanceOf(FrameVersionError);
  expect((refused as Error).message).toContain('a frame of format TSP3 at byte 0, written by a later Tributary; this one reads TSP1 and TSP2');
  expect(readFileSync(file)).toEqual(bytes);
});
