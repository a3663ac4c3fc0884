import { event, OK, rowsOf, startHarness, user, type Harness } from './harness';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(() => h.close());

const TAB = 'events_2026_11';

test('whole numbers beyond 2^53 are text cells with every digit, never rounded numbers', async () => {
  const w = await h.open();
  const e = event(h.clock, { id: 603851970716743426n, neg: -603851970716743426n, wide: 12345678901234567890n, wneg: -98765432109876543210n, nested: { ids: [603851970716743426n, -98765432109876543210n] }, small: 7 }, { uid: '603851970716743426' });
  expect(await h.write(w, [e])).toEqual([OK]);
  const [row] = rowsOf(h.tab(TAB));
  expect(row).toMatchObject({ _uid: '603851970716743426', id: '603851970716743426', neg: '-603851970716743426', wide: '12345678901234567890', wneg: '-98765432109876543210', nested: '{"ids":[603851970716743426,-98765432109876543210]}', small: 7 });
  const sheet = h.fake.sheet(h.spreadsheetId, TAB);
  const header = h.tab(TAB)[0]!;
  expect(sheet.cell(2, header.indexOf('id') + 1)).toEqual({ t: 's', v: '603851970716743426' });
  expect(sheet.cell(2, header.indexOf('small') + 1)).toEqual({ t: 'n', v: 7 });
});

test('an upsert keeps them as text when a later update does not resend them', async () => {
  const w = await h.open();
  await h.write(w, [user(h.clock, 'u1', { shop: 603851970716743426n, wide: -98765432109876543210n })]);
  await h.write(w, [user(h.clock, 'u1', { plan: 'pro' })]);
  expect(rowsOf(h.tab('users')).map(({ _id, _received_at, ...rest }) => rest)).toEqual([{ _uid: 'u1', shop: '603851970716743426', wide: '-98765432109876543210', plan: 'pro' }]);
});
