import { isValidTimeZone, parseEventTime } from '../../src/core/records/event-time';

const ok = (input: string, zone = 'UTC') => {
  const r = parseEventTime(input, zone);
  if (!r.ok) throw new Error(`${input} refused: ${r.reason}`);
  return r.iso;
};
const refused = (input: string, zone = 'UTC') => parseEventTime(input, zone).ok === false;

describe('without an offset: the tracker zone', () => {
  test('UTC', () => {
    expect(ok('2026-11-22T14:03:00')).toBe('2026-11-22T14:03:00.000Z');
  });
  test.each([
    ['America/New_York', '2026-01-15T09:30:00', '2026-01-15T14:30:00.000Z'],
    ['America/New_York', '2026-07-04T12:00:00', '2026-07-04T16:00:00.000Z'],
    ['Europe/Paris', '2026-07-04T12:00:00', '2026-07-04T10:00:00.000Z'],
    ['Asia/Kolkata', '2026-07-04T12:00:00', '2026-07-04T06:30:00.000Z'],
    ['Australia/Lord_Howe', '2026-01-01T12:00:00', '2026-01-01T01:00:00.000Z'],
    ['Pacific/Chatham', '2026-07-01T12:00:00', '2026-06-30T23:15:00.000Z'],
  ])('%s %s', (zone, input, expected) => {
    expect(ok(input, zone)).toBe(expected);
  });

  test('a time in the spring-forward gap is moved forward by the gap', () => {
    expect(ok('2026-03-08T02:30:00', 'America/New_York')).toBe('2026-03-08T07:30:00.000Z');
    expect(ok('2026-03-29T02:30:00', 'Europe/Paris')).toBe('2026-03-29T01:30:00.000Z');
  });

  test('an ambiguous fall-back time is the earlier of its two instants', () => {
    expect(ok('2026-11-01T01:30:00', 'America/New_York')).toBe('2026-11-01T05:30:00.000Z');
    expect(ok('2026-10-25T02:30:00', 'Europe/Paris')).toBe('2026-10-25T00:30:00.000Z');
  });

  test('the minutes either side of a transition', () => {
    expect(ok('2026-03-08T01:59:59', 'America/New_York')).toBe('2026-03-08T06:59:59.000Z');
    expect(ok('2026-03-08T03:00:00', 'America/New_York')).toBe('2026-03-08T07:00:00.000Z');
    expect(ok('2026-11-01T00:59:59', 'America/New_York')).toBe('2026-11-01T04:59:59.000Z');
    expect(ok('2026-11-01T02:00:00', 'America/New_York')).toBe('2026-11-01T07:00:00.000Z');
  });
});

describe('with Z or an offset: the zone is ignored', () => {
  test.each([
    ['2026-07-04T12:00:00Z', '2026-07-04T12:00:00.000Z'],
    ['2026-07-04T12:00:00z', '2026-07-04T12:00:00.000Z'],
    ['2026-07-04T12:00:00+02:00', '2026-07-04T10:00:00.000Z'],
    ['2026-07-04T12:00:00+0200', '2026-07-04T10:00:00.000Z'],
    ['2026-07-04T12:00:00+02', '2026-07-04T10:00:00.000Z'],
    ['2026-07-04T12:00:00-05:30', '2026-07-04T17:30:00.000Z'],
    ['2026-01-01T00:30:00+01:00', '2025-12-31T23:30:00.000Z'],
    ['2026-07-04T12:00:00 02:00', '2026-07-04T10:00:00.000Z'],
  ])('%s', (input, expected) => {
    expect(ok(input, 'America/New_York')).toBe(expected);
  });
});

describe('shapes', () => {
  test.each([
    ['2026-07-04T12:00:00.1Z', '2026-07-04T12:00:00.100Z'],
    ['2026-07-04T12:00:00.123456789Z', '2026-07-04T12:00:00.123Z'],
    ['2026-07-04T12:00:00,5Z', '2026-07-04T12:00:00.500Z'],
    ['2026-07-04 12:00:00', '2026-07-04T12:00:00.000Z'],
    ['2026-07-04T12:00', '2026-07-04T12:00:00.000Z'],
    ['2024-02-29T00:00:00', '2024-02-29T00:00:00.000Z'],
    ['0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('%s', (input, expected) => {
    expect(ok(input)).toBe(expected);
  });

  test.each([
    '2026-02-30T10:00:00',
    '2025-02-29T10:00:00',
    '2026-04-31T10:00:00',
    '2026-00-10T10:00:00',
    '2026-13-01T00:00:00',
    '0000-01-01T00:00:00',
    '2026-01-01T24:00:00',
    '2026-01-01T23:60:00',
    '2026-01-01T23:59:60',
    '2026-01-01T10:00:00+24:00',
    '2026-01-01T10:00:00+05:60',
    '2026-01-01',
    '2026-1-1T10:00:00',
    '2026-W01-1T10:00:00',
    '2026-001T10:00:00',
    '26-01-01T10:00:00',
    '2026-01-01T10:00:00 ',
    '2026-01-01T10:00:00.Z',
    '2026-01-01T10:00:00+5',
    '1700000000',
    '',
    'yesterday',
  ])('%j is refused', (input) => {
    expect(refused(input, 'America/New_York')).toBe(true);
  });
});

test('isValidTimeZone', () => {
  expect(isValidTimeZone('America/New_York')).toBe(true);
  expect(isValidTimeZone('UTC')).toBe(true);
  expect(isValidTimeZone('Mars/Olympus_Mons')).toBe(false);
});
