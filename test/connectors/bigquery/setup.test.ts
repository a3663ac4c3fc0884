import { ConfigurationError, PermanentError, RetryableError } from '../../../connectors/errors';
import { BigQueryApi } from '../../../connectors/bigquery/client';
import { BigQuerySettingsSchema, resolveSettings } from '../../../connectors/bigquery/config';
import { event, openWriter, PROJECT, readerClient, statuses, uniqueDataset, useBigQueryFake, user } from './helpers';

// The client's transport on Node's fetch under jest: see test/fakes/bigquery/jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('../../fakes/bigquery/jest-transport')>('../../fakes/bigquery/jest-transport').teenyRequestOnNativeFetch());

/** Dataset and tables on first use, `destinations test`, and how failures are classified. */
const bq = useBigQueryFake();
const signal = () => new AbortController().signal;

describe('first use', () => {
  it('creates the dataset in its location and the three tables, sending no credentials to a custom endpoint', async () => {
    const before = bq.fake.stats.authorizedRequests;
    const fx = await openWriter(bq.fake, { location: 'europe-west1', tables: { events: 'ev', users: 'us', sessions: 'se' } });
    await fx.writer.test(signal());
    const [meta] = await readerClient(bq.fake, 'europe-west1').dataset(fx.dataset).getMetadata();
    expect(meta.location).toBe('europe-west1');
    expect(['ev', 'us', 'se'].map((t) => bq.fake.table(PROJECT, fx.dataset, t)?.fields[0]?.name)).toEqual(['_id', '_id', '_id']);
    expect(bq.fake.table(PROJECT, fx.dataset, 'us')!.clustering).toEqual({ fields: ['_uid'] });
    expect(bq.fake.table(PROJECT, fx.dataset, 'se')!.clustering).toEqual({ fields: ['_sid'] });
    expect(statuses(await fx.write([user('u1', { a: 1 }), event('e', {})]))).toEqual(['ok', 'ok']);
    expect(bq.fake.stats.authorizedRequests).toBe(before);
    await fx.close();
  });

  it('refuses a dataset in another location with a readable message', async () => {
    const dataset = uniqueDataset();
    await readerClient(bq.fake).createDataset(dataset, { location: 'EU' });
    const fx = await openWriter(bq.fake, { dataset, location: 'US' });
    const err = await fx.writer.test(signal()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toBe(`dataset ${PROJECT}:${dataset} is in location EU, but this destination's location is US: set "location": "EU" or use another dataset`);
    await expect(fx.write([event('e', {})])).rejects.toBeInstanceOf(ConfigurationError);
  });

  it('pauses, rather than dead-letters, when the dataset cannot be created (400 invalid location)', async () => {
    const fx = await openWriter(bq.fake);
    bq.fake.faults.inject('datasets.insert', { kind: 'error', status: 400, reason: 'invalid', message: 'Invalid value for location: Mars' });
    await expect(fx.write([event('e', {})])).rejects.toThrow(ConfigurationError);
    expect(statuses(await fx.write([event('e', {})]))).toEqual(['ok']);
  });

  it('adds Tributary’s columns missing from an existing table and refuses one of the wrong type', async () => {
    const dataset = uniqueDataset();
    const client = readerClient(bq.fake);
    await client.createDataset(dataset);
    await client.dataset(dataset).createTable('users', { schema: { fields: [{ name: '_uid', type: 'STRING' }, { name: 'notes', type: 'STRING' }] } });
    await client.dataset(dataset).createTable('events', { schema: { fields: [{ name: '_id', type: 'STRING' }, { name: '_event_at', type: 'STRING' }] } });
    const fx = await openWriter(bq.fake, { dataset });
    expect(statuses(await fx.write([user('u1', { notes: 'hi' })]))).toEqual(['ok']);
    expect(bq.fake.table(PROJECT, dataset, 'users')!.fields.map((f) => f.name)).toEqual(['_uid', 'notes', '_id', '_received_at', '_context', '_properties']);
    expect((await fx.query('SELECT notes FROM `@@.users`'))[0]).toEqual({ notes: 'hi' });
    await expect(fx.write([event('e', {})])).rejects.toThrow(/column _event_at of table .*events is STRING; Tributary needs TIMESTAMP/);
  });
});

describe('destinations test and errors', () => {
  it('passes when the settings work', async () => {
    const fx = await openWriter(bq.fake);
    await expect(fx.writer.test(signal())).resolves.toBeUndefined();
  });

  it.each([
    ['403 accessDenied', 403, 'accessDenied', ConfigurationError],
    ['403 accessNotConfigured (API disabled)', 403, 'accessNotConfigured', ConfigurationError],
    ['401 unauthorized', 401, 'authError', ConfigurationError],
    ['403 rateLimitExceeded', 403, 'rateLimitExceeded', RetryableError],
    ['403 quotaExceeded', 403, 'quotaExceeded', RetryableError],
    ['500 internalError', 500, 'internalError', RetryableError],
    ['503 backendError', 503, 'backendError', RetryableError],
    ['400 invalid', 400, 'invalid', PermanentError],
  ])('classifies %s', async (_label, status, reason, type) => {
    const api = new BigQueryApi(resolveSettings(BigQuerySettingsSchema.parse({ projectId: PROJECT, dataset: 'any', endpoint: bq.fake.url })));
    bq.fake.faults.inject('datasets.get', { kind: 'error', status, reason, message: `${reason} from the fake` });
    const err = await api.getDataset(signal()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(type);
    expect(err).toMatchObject({ details: { status, reason } });
    // What only the owner can fix says the next step, then Google's words.
    const steps: Record<string, RegExp> = {
      accessDenied: new RegExp(`^anonymous at ${bq.fake.url.replace(/[./]/g, '\\$&')} may not do this in ${PROJECT}\\.any: grant it the role BigQuery Data Editor on the dataset .* and BigQuery Job User on the project`),
      accessNotConfigured: new RegExp(`^The BigQuery API is not enabled in project ${PROJECT}: enable it at https://console\\.cloud\\.google\\.com/apis/library/bigquery\\.googleapis\\.com\\?project=${PROJECT}`),
      authError: /^Google refused the key of anonymous at .*: it was deleted or disabled/,
    };
    expect((err as Error).message).toMatch(steps[reason] ?? new RegExp(`^BigQuery datasets.get failed: ${reason} from the fake$`));
    if (steps[reason]) expect((err as Error).message).toMatch(new RegExp(`Google said \\(datasets.get\\): ${reason} from the fake$`));
  });

  it('reports a disabled API during destinations test as a configuration error', async () => {
    const fx = await openWriter(bq.fake);
    bq.fake.faults.inject('datasets.get', { kind: 'error', status: 403, reason: 'accessNotConfigured', message: `BigQuery API has not been used in project ${PROJECT} before or it is disabled.` });
    await expect(fx.writer.test(signal())).rejects.toThrow(ConfigurationError);
    bq.fake.faults.inject('jobs.query', { kind: 'error', status: 403, reason: 'accessDenied', message: 'User does not have bigquery.jobs.create permission.' });
    await expect(fx.writer.test(signal())).rejects.toThrow(/bigquery.jobs.create/);
  });

  it('a pasted service-account key signs its own JWTs for a custom endpoint; once the key is deleted, the message says to make a new one', async () => {
    const key = bq.fake.accounts.create('tributary', 'shop-analytics');
    const fx = await openWriter(bq.fake, { credentials: { ...key } });
    const before = bq.fake.stats.authorizedRequests;
    await expect(fx.writer.test(signal())).resolves.toBeUndefined();
    expect(bq.fake.stats.authorizedRequests).toBeGreaterThan(before);
    bq.fake.accounts.deleteKey(key.private_key_id);
    const refused = await fx.writer.test(signal()).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toMatch(/^Google refused the key of tributary@shop-analytics\.iam\.gserviceaccount\.com: it was deleted or disabled/);
    await fx.close();
  });

  it('treats an unreachable endpoint as retryable, and a write after close as retryable', async () => {
    const fx = await openWriter(bq.fake, { endpoint: 'http://127.0.0.1:9', requestTimeoutMs: 2000 });
    await expect(fx.write([event('e', {})])).rejects.toBeInstanceOf(RetryableError);
    await fx.close();
    await expect(fx.write([event('e', {})])).rejects.toMatchObject({ details: { reason: 'closed' } });
  });
});
