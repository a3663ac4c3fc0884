import { OK, rowsOf, session, startHarness, user, type Harness } from './harness';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(() => h.close());

const users = () => rowsOf(h.tab('users')).map(({ _id, _received_at, ...rest }) => rest);

test('one row per user; updates merge, only supplied cells are written, null clears', async () => {
  const w = await h.open();
  await h.write(w, [user(h.clock, 'u1', { plan: 'free', seats: 1 }), user(h.clock, 'u2', { plan: 'free' })]);
  // Someone types into a cell of ours and into a column of their own: untouched by the merge.
  const sheet = h.fake.sheet(h.spreadsheetId, 'users');
  sheet.insertColumns(6, 1);
  sheet.set(1, 6, { t: 's', v: 'owner' });
  sheet.set(2, 6, { t: 's', v: 'ana' });
  const batch = [user(h.clock, 'u1', { plan: 'pro' }), user(h.clock, 'u1', { seats: null, country: 'FR' }), user(h.clock, 'u3', { plan: 'team', seats: null })];
  const writesBefore = h.fake.requests.length;
  expect(await h.write(w, batch)).toEqual([OK, OK, OK]);
  expect(users()).toEqual([
    { _uid: 'u1', plan: 'pro', owner: 'ana', country: 'FR' },
    { _uid: 'u2', plan: 'free' },
    { _uid: 'u3', plan: 'team' },
  ]);
  const latest = rowsOf(h.tab('users'))[0]!;
  expect(latest._id).toBe(batch[1]!.id);
  // Repeated updates to one key are coalesced: one values.batchUpdate for the batch (header cell, row
  // updates and the new user's row), after widening the grid for `country`.
  const writes = (from: number) => h.fake.counts((r) => h.fake.requests.indexOf(r) >= from && r.method !== 'values.batchGet' && r.method !== 'spreadsheets.get');
  expect(writes(writesBefore)).toEqual({ 'spreadsheets.batchUpdate': 1, 'values.batchUpdate': 1 });
});

test('sessions keep their stored _uid when an update has none; context goes to _context', async () => {
  const w = await h.open();
  await h.write(w, [session(h.clock, 's1', { page: 1 }, 'u1')]);
  await h.write(w, [{ ...session(h.clock, 's1', { page: 2 }), context: { ip: '10.0.0.1', userAgent: 'curl' } }]);
  expect(rowsOf(h.tab('sessions')).map(({ _id, _received_at, ...rest }) => rest)).toEqual([{ _uid: 'u1', _sid: 's1', page: 2, _context: '{"ip":"10.0.0.1","userAgent":"curl"}' }]);
});

test('rows sorted or inserted by hand: the index is checked, rebuilt, and each key keeps one row', async () => {
  const w = await h.open();
  await h.write(w, [user(h.clock, 'a', { n: 1 }), user(h.clock, 'b', { n: 2 }), user(h.clock, 'c', { n: 3 })]);
  const sheet = h.fake.sheet(h.spreadsheetId, 'users');
  // Someone sorts descending and inserts a blank row under the header.
  sheet.rows = [sheet.rows[0], undefined, sheet.rows[3], sheet.rows[2], sheet.rows[1]];
  sheet.props.gridProperties.rowCount += 1;
  await h.write(w, [user(h.clock, 'a', { n: 10 }), user(h.clock, 'd', { n: 4 })]);
  expect(users()).toEqual([{}, { _uid: 'c', n: 3 }, { _uid: 'b', n: 2 }, { _uid: 'a', n: 10 }, { _uid: 'd', n: 4 }]);
  // A later update goes straight to the right row again, checked with one read.
  const reads = h.fake.counts((r) => r.method === 'values.batchGet')['values.batchGet']!;
  await h.write(w, [user(h.clock, 'c', { n: 30 })]);
  expect(users()[1]).toEqual({ _uid: 'c', n: 30 });
  expect(h.fake.counts((r) => r.method === 'values.batchGet')['values.batchGet']).toBe(reads + 1);
});

test('a new user written but its response lost: the retry updates that row instead of adding another', async () => {
  const w = await h.open();
  await h.write(w, [user(h.clock, 'u1', { n: 1 })]);
  const batch = [user(h.clock, 'u2', { n: 2 }), user(h.clock, 'u1', { n: 11 })];
  h.fake.faults.add({ kind: 'lose-response' }, { method: 'values.batchUpdate' });
  await expect(h.write(w, batch)).rejects.toMatchObject({ kind: 'retryable' });
  expect(await h.write(w, batch)).toEqual([OK, OK]);
  expect(users()).toEqual([
    { _uid: 'u1', n: 11 },
    { _uid: 'u2', n: 2 },
  ]);
});

test('a restarted writer builds its index from the sheet', async () => {
  await h.write(await h.open(), [user(h.clock, 'u1', { plan: 'free' })]);
  const fresh = await h.open();
  await h.write(fresh, [user(h.clock, 'u1', { plan: null, seats: 2 })]);
  expect(users()).toEqual([{ _uid: 'u1', seats: 2 }]);
});
