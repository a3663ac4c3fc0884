import { validate, version } from 'uuid';
import { newRecordId } from '../../../src/core/records/record-id';

/** The 48-bit Unix milliseconds at the front of a UUIDv7. */
const msecsOf = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

test('record ids are UUIDv7s carrying the time they were made, in increasing order past many pool refills', () => {
  const before = Date.now();
  const ids = Array.from({ length: 5_000 }, () => newRecordId());
  const after = Date.now();
  for (const id of ids) {
    expect(validate(id)).toBe(true);
    expect(version(id)).toBe(7);
    expect('89ab').toContain(id[19]);
  }
  for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
  // Thousands of ids in a few milliseconds: the counter keeps them apart, the time stays the clock's.
  expect(msecsOf(ids[0]!)).toBeGreaterThanOrEqual(before);
  expect(msecsOf(ids[ids.length - 1]!)).toBeLessThanOrEqual(after + 1);
});
