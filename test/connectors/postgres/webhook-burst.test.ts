import { parseExactJson } from '../../../src/core/records/exact-json';
import type { Properties } from '../../../src/core/records/types';
import { burstDeliveries } from '../../helpers/webhook-burst';
import { event, usePostgres } from './pg-fixture';

const pg = usePostgres('burst');

/**
 * The widest real input the project has: every recorded GitHub webhook payload, Shopify orders
 * with 18-digit ids and dozens of attributes, SendGrid, CloudEvents, Slack and Twilio deliveries,
 * each stored whole as one event, as webhook sources store them. Hundreds of columns, nested JSON,
 * integers past 2^53: every record is written, none dead-lettered.
 */
test('real webhook payloads with hundreds of properties are all stored, none refused', async () => {
  const f = await pg.fixture();
  const records = burstDeliveries()
    .filter((d) => d.contentType.startsWith('application/json'))
    .map((d) => event(`${d.source}.delivery`, parseExactJson(d.body) as Properties));
  expect(records.length).toBeGreaterThan(1000);
  for (let i = 0; i < records.length; i += 500) {
    const outcomes = await f.write(records.slice(i, i + 500));
    expect(outcomes.filter((o) => o.status !== 'ok')).toEqual([]);
  }
  const [counted] = await f.query(`SELECT count(*)::int AS n, count(DISTINCT _id)::int AS ids FROM "${f.schema}".events`);
  expect(counted).toEqual({ n: records.length, ids: records.length });
  expect(Object.keys(await f.columns('events')).length).toBeGreaterThan(200);
});
