import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Spool, SpoolCorruptError, type SpooledEntry } from '../../jobs/spill/spool';

/** The disk spool on its own: frames written, read back in order, cut back to what Redis agreed to. */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tributary-spool-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const entries = (from: number, to: number): SpooledEntry[] =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ id: `${1000 + from + i}-0`, json: JSON.stringify({ kind: 'event', id: `e${from + i}`, event: 'view', properties: { text: 'tab\there\nnewline', n: from + i } }) }));
const ids = (list: SpooledEntry[]) => list.map((e) => e.id);
const segments = () => readdirSync(dir).filter((f) => f.endsWith('.spool')).sort();

test('frames read back oldest first from past a cursor, across frames, exact text', async () => {
  const spool = await Spool.open(dir, null, '0-0');
  await spool.append(entries(1, 5));
  await spool.append(entries(6, 10));
  expect(ids(await spool.readAfter('0-0', 3))).toEqual(['1001-0', '1002-0', '1003-0']);
  expect(ids(await spool.readAfter('1004-0', 4))).toEqual(['1005-0', '1006-0', '1007-0', '1008-0']);
  expect((await spool.readAfter('1009-0', 10)).map((e) => JSON.parse(e.json))).toEqual([{ kind: 'event', id: 'e10', event: 'view', properties: { text: 'tab\there\nnewline', n: 10 } }]);
  expect(spool.hasAfter('1009-0')).toBe(true);
  expect(spool.hasAfter('1010-0')).toBe(false);
  expect(spool.backlog('1005-0')).toMatchObject({ records: 5, oldestId: '1006-0' });
  await spool.close();
});

test('frames are compressed: 1 000 similar events take far less than their JSON', async () => {
  const spool = await Spool.open(dir, null, '0-0');
  const list = entries(1, 1000);
  await spool.append(list);
  const json = list.reduce((n, e) => n + e.json.length, 0);
  const disk = statSync(path.join(dir, segments()[0]!)).size;
  expect(disk).toBeLessThan(json / 4);
  await spool.close();
});

test('on open, frames Redis never agreed to are cut off and appending goes on after the last agreed one', async () => {
  const spool = await Spool.open(dir, null, '0-0');
  await spool.append(entries(1, 5));
  await spool.append(entries(6, 10));
  await spool.close();
  // Redis agreed to the first frame only: the process died before committing the second.
  const reopened = await Spool.open(dir, '1005-0', '0-0');
  expect(reopened.lastId).toBe('1005-0');
  expect(ids(await reopened.readAfter('0-0', 100))).toEqual(ids(entries(1, 5)));
  await reopened.append(entries(6, 7));
  await reopened.close();
  const again = await Spool.open(dir, '1007-0', '0-0');
  expect(ids(await again.readAfter('0-0', 100))).toEqual(ids(entries(1, 7)));
  await again.close();
});

test('a torn last frame (the process died mid-write) is cut off; a damaged earlier one is refused', async () => {
  const spool = await Spool.open(dir, null, '0-0');
  await spool.append(entries(1, 5));
  await spool.close();
  const file = path.join(dir, segments()[0]!);
  const whole = readFileSync(file);
  appendFileSync(file, whole.subarray(0, whole.length - 7));
  const reopened = await Spool.open(dir, '1005-0', '0-0');
  expect(ids(await reopened.readAfter('0-0', 100))).toEqual(ids(entries(1, 5)));
  expect(statSync(file).size).toBe(whole.length);
  await reopened.close();

  // One flipped byte inside a frame that is followed by another: disk damage, not a crash.
  const two = await Spool.open(dir, '1005-0', '0-0');
  await two.append(entries(6, 8));
  await two.close();
  const bytes = readFileSync(file);
  bytes[30] = bytes[30]! ^ 0xff;
  writeFileSync(file, bytes);
  await expect(Spool.open(dir, '1008-0', '0-0')).rejects.toBeInstanceOf(SpoolCorruptError);
});

test('segments the cursor has passed are deleted, on open and as delivery goes', async () => {
  const spool = await Spool.open(dir, null, '0-0');
  await spool.append(entries(1, 5));
  await spool.dropThrough('1003-0');
  expect(segments()).toHaveLength(1);
  await spool.dropThrough('1005-0');
  expect(segments()).toHaveLength(0);
  expect(spool.hasAfter('0-0')).toBe(false);
  await spool.append(entries(6, 8));
  expect(ids(await spool.readAfter('1005-0', 10))).toEqual(ids(entries(6, 8)));
  await spool.close();
  const reopened = await Spool.open(dir, '1008-0', '1008-0');
  expect(segments()).toHaveLength(0);
  expect(reopened.lastId).toBeNull();
  await reopened.close();
});

test('an append older than what the spool holds is refused', async () => {
  const spool = await Spool.open(dir, null, '0-0');
  await spool.append(entries(5, 6));
  await expect(spool.append(entries(1, 2))).rejects.toThrow('out of order');
  await spool.close();
});

test('a frame of a later format is refused by name, and the file is left as it is', async () => {
  const spool = await Spool.open(dir, null, '0-0');
  await spool.append(entries(1, 3));
  await spool.close();
  const file = path.join(dir, segments()[0]!);
  const bytes = readFileSync(file);
  bytes.write('TSP3', 0, 'latin1');
  writeFileSync(file, bytes);
  const refused = await Spool.open(dir, '1003-0', '0-0').then(() => undefined, (err: unknown) => err as Error);
  expect(refused).toBeInstanceOf(SpoolCorruptError);
  expect(refused!.message).toContain('a frame of format TSP3 at byte 0, written by a later Tributary; this one reads TSP1 and TSP2');
  expect(readFileSync(file)).toEqual(bytes);
});
