import { batchMessageSizes } from '../../../src/ingest/segment/message-sizes';
import { seededRandom } from '../../helpers/seeded-random';

const sizes = (text: string) => batchMessageSizes(Buffer.from(text));

test('the byte span of each element of the top-level batch, white space left out', () => {
  expect(sizes('{"batch":[{"a":1},{"b":"x"}]}')).toEqual([7, 9]);
  expect(sizes(' { "sentAt" : "x", "batch" : [ {"a":"]},\\"["} ,\n 12 , "s" , null ] , "writeKey":"k" } ')).toEqual([14, 2, 3, 4]);
  expect(sizes('{"batch":[]}')).toEqual([]);
  expect(sizes('{"batch":[{"é":"日本"}]}')).toEqual([Buffer.byteLength('{"é":"日本"}')]);
});

test('only the top level counts; the last batch key wins; no batch array gives none', () => {
  expect(sizes('{"context":{"batch":[1,2,3]},"batch":[{}]}')).toEqual([2]);
  expect(sizes('{"batch":[1],"batch":[{},{}]}')).toEqual([2, 2]);
  expect(sizes('{"batch":{"a":[1]}}')).toBeUndefined();
  expect(sizes('{"b\\u0061tch":[1]}')).toBeUndefined();
  expect(sizes('[{"batch":[1]}]')).toBeUndefined();
  expect(sizes('{"xbatch":[1], "batchx":[2]}')).toBeUndefined();
});

test('random batches: each span is the element as JSON.stringify wrote it', () => {
  const rand = seededRandom(7);
  const value = (d: number): unknown => {
    const r = rand();
    if (d > 3 || r < 0.3) return ['a"b', 'ü\\', '', '}]', 1.5, -3, true, null][Math.floor(rand() * 8)];
    if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => value(d + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(rand() * 4) }, (_, i) => [`k${i}"[`, value(d + 1)]));
  };
  for (let n = 0; n < 200; n++) {
    const batch = Array.from({ length: Math.floor(rand() * 6) }, () => value(0));
    const pretty = rand() < 0.5;
    const text = JSON.stringify({ writeKey: 'w', batch, sentAt: '[' }, null, pretty ? 2 : undefined);
    const expected = pretty ? undefined : batch.map((m) => Buffer.byteLength(JSON.stringify(m)));
    const found = sizes(text)!;
    expect(found).toHaveLength(batch.length);
    if (expected) expect(found).toEqual(expected);
  }
});
