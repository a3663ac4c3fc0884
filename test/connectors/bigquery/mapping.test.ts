import { clientOptions } from '../../../connectors/bigquery/client';
import { applyPlan, planColumns, stateFromFields, withoutWidenings } from '../../../connectors/bigquery/columns';
import { BigQuerySettingsSchema, resolveSettings } from '../../../connectors/bigquery/config';
import { mergeSql } from '../../../connectors/bigquery/merge-sql';
import { structArray } from '../../../connectors/bigquery/query-params';
import { baseColumnName, hashedColumnName, ownerOf } from '../../../connectors/bigquery/names';
import { fixedFields, tableSpec } from '../../../connectors/bigquery/tables';
import { props } from './helpers';

describe('column names', () => {
  it.each([
    ['plan', 'plan'],
    ['page title', 'page_title'],
    ['prénom', 'pr_nom'],
    ['2fa', 'p_2fa'],
    ['$ref', 'p__ref'],
    ['__proto__', 'p___proto__'],
    ['_PARTITIONTIME', 'p__PARTITIONTIME'],
    ['', 'p_'],
  ])('%j → %s', (property, column) => {
    expect(baseColumnName(property)).toBe(column);
    expect(column).toMatch(/^[A-Za-z][A-Za-z0-9_]*$/);
  });

  it('cuts long names to 300 characters, the hashed form too', () => {
    expect(baseColumnName('x'.repeat(400))).toHaveLength(300);
    expect(hashedColumnName('x'.repeat(400))).toMatch(/^x{291}_[0-9a-f]{8}$/);
  });

  it('derives the fallback from the property name alone', () => {
    expect(hashedColumnName('Plan')).toBe('Plan_fa8ed0bd');
    expect(hashedColumnName('Plan')).toBe(hashedColumnName('Plan'));
    expect(hashedColumnName('page-title')).not.toBe(hashedColumnName('page title'));
  });

  it('reads the owner of a column from its description, else its name', () => {
    expect(ownerOf({ name: 'page_title', description: 'tributary property: page title' })).toBe('page title');
    expect(ownerOf({ name: 'notes', description: 'typed by hand' })).toBe('notes');
  });
});

describe('column plan', () => {
  const empty = () => stateFromFields('event', fixedFields('event'));

  it('creates a NULLABLE column per new property, typed from its first non-null value, with its owner in the description', () => {
    const plan = planColumns(empty(), [props({ n: null, plan: 'pro' }), props({ n: 3, ratio: 0.5, ok: true, tags: ['a'], meta: { a: 1 } }), props({ n: 'x' })], 100);
    expect(plan.add).toEqual([
      { name: 'plan', type: 'STRING', mode: 'NULLABLE', description: 'tributary property: plan' },
      { name: 'n', type: 'INT64', mode: 'NULLABLE', description: 'tributary property: n' },
      { name: 'ratio', type: 'FLOAT64', mode: 'NULLABLE', description: 'tributary property: ratio' },
      { name: 'ok', type: 'BOOL', mode: 'NULLABLE', description: 'tributary property: ok' },
      { name: 'tags', type: 'JSON', mode: 'NULLABLE', description: 'tributary property: tags' },
      { name: 'meta', type: 'JSON', mode: 'NULLABLE', description: 'tributary property: meta' },
    ]);
  });

  it('resolves names equal but for case, or equal once sanitized, with the hashed name; first seen keeps the base', () => {
    const plan = planColumns(empty(), [props({ plan: 1, Plan: 2, 'page title': 'a', 'page-title': 'b' })], 100);
    expect(plan.add.map((f) => f.name)).toEqual(['plan', 'Plan_fa8ed0bd', 'page_title', hashedColumnName('page-title')]);
  });

  it('keeps the mapping of an existing table, whatever the order of a later batch', () => {
    const first = planColumns(empty(), [props({ plan: 1, Plan: 2 })], 100);
    const state = stateFromFields('event', [...fixedFields('event'), ...first.add]);
    const later = planColumns(state, [props({ Plan: 5, plan: 6 })], 100);
    expect(later.add).toEqual([]);
    expect(later.columns.get('Plan')?.column).toBe('Plan_fa8ed0bd');
    expect(later.columns.get('plan')?.column).toBe('plan');
  });

  it('stops adding columns at maxColumns: further properties live in _properties only', () => {
    const plan = planColumns(empty(), [props({ a: 1, b: 2, c: 3 })], 2);
    expect(plan.add.map((f) => f.name)).toEqual(['a', 'b']);
    expect(plan.columns.has('c')).toBe(false);
  });

  it('widens an existing INT64 column for a fraction (FLOAT64) or a whole number beyond 64 bits (BIGNUMERIC), unless it must keep its type', () => {
    const state = stateFromFields('event', [...fixedFields('event'), { name: 'n', type: 'INTEGER' }, { name: 'm', type: 'INTEGER' }, { name: 'k', type: 'INTEGER' }, { name: 's', type: 'STRING' }]);
    state.keepType.add('k');
    const plan = planColumns(state, [props({ n: 1, m: 2, k: 3, s: 'x' }), props({ n: 1.5, m: 2n ** 70n, k: 0.5, s: 2.5 })], 100);
    expect(plan.add).toEqual([]);
    expect(plan.widen).toEqual([
      { column: 'n', type: 'float' },
      { column: 'm', type: 'hugeint' },
    ]);
    expect([...plan.columns].map(([p, c]) => `${p}:${c.type}`)).toEqual(['n:float', 'm:hugeint', 'k:integer', 's:string']);
    const applied = applyPlan(state, withoutWidenings(plan, new Set(['m'])), ['m']);
    expect(applied.fields.slice(-4).map((f) => `${f.name}:${f.type}`)).toEqual(['n:FLOAT64', 'm:INTEGER', 'k:INTEGER', 's:STRING']);
    expect(applied.owners.get('m')?.type).toBe('integer');
    expect(applied.keepType).toEqual(new Set(['k', 'm']));
  });

  it('never gives a property a column named like Tributary’s own', () => {
    const plan = planColumns(empty(), [props({ '-id': 1, ' properties': 2 })], 100);
    expect(plan.add.map((f) => f.name)).toEqual(['p__id', 'p__properties']);
  });
});

describe('tables', () => {
  it('partitions events by day on _event_at and clusters them by _event, _uid; users by _uid', () => {
    expect(tableSpec('event')).toMatchObject({ timePartitioning: { type: 'DAY', field: '_event_at' }, clustering: { fields: ['_event', '_uid'] } });
    expect(tableSpec('user')).toEqual({ fields: fixedFields('user'), clustering: { fields: ['_uid'] } });
    expect(fixedFields('session').map((f) => `${f.name}:${f.type}:${f.mode}`)).toEqual(['_id:STRING:REQUIRED', '_uid:STRING:NULLABLE', '_sid:STRING:REQUIRED', '_received_at:TIMESTAMP:REQUIRED', '_context:JSON:NULLABLE', '_properties:JSON:REQUIRED']);
  });
});

describe('MERGE', () => {
  it('joins on the key, assigns every other column, keeps stored values where asked, inserts new keys', () => {
    const columns = [
      { name: '_id', type: 'STRING' },
      { name: '_uid', type: 'STRING' },
      { name: '_context', type: 'JSON', keepStored: true },
      { name: 'order', type: 'INT64' },
    ];
    expect(mergeSql('`p`.`d`.`users`', '_uid', columns)).toBe(
      [
        'MERGE INTO `p`.`d`.`users` AS t',
        'USING (SELECT * FROM UNNEST(@rows)) AS s',
        'ON t.`_uid` = s.c1',
        'WHEN MATCHED THEN UPDATE SET `_id` = s.c0, `_context` = COALESCE(s.c2, t.`_context`), `order` = s.c3',
        'WHEN NOT MATCHED THEN INSERT (`_id`, `_uid`, `_context`, `order`) VALUES (s.c0, s.c1, s.c2, s.c3)',
      ].join('\n'),
    );
    expect(structArray('rows', ['STRING', 'INT64'], [['u1', '3'], ['u2', null]])).toEqual({
      name: 'rows',
      parameterType: { type: 'ARRAY', arrayType: { type: 'STRUCT', structTypes: [{ name: 'c0', type: { type: 'STRING' } }, { name: 'c1', type: { type: 'INT64' } }] } },
      parameterValue: { arrayValues: [{ structValues: { c0: { value: 'u1' }, c1: { value: '3' } } }, { structValues: { c0: { value: 'u2' }, c1: { value: null } } }] },
    });
  });
});

describe('settings', () => {
  const base = { projectId: 'my-project', dataset: 'analytics' };

  it('fills defaults: location US, tables events/users/sessions, 9 990 columns, 60 s per call', () => {
    expect(resolveSettings(BigQuerySettingsSchema.parse(base))).toEqual({ ...base, location: 'US', keyFile: undefined, credentials: undefined, endpoint: undefined, tables: { events: 'events', users: 'users', sessions: 'sessions' }, maxColumns: 9990, requestTimeoutMs: 60_000 });
  });

  it('takes a key file or an inline service-account key, as the Sheets connector does, not both', () => {
    const key = { type: 'service_account', client_email: 'svc@my-project.iam.gserviceaccount.com', private_key: '-----BEGIN PRIVATE KEY-----\n…', private_key_id: 'abc' };
    expect(BigQuerySettingsSchema.parse({ ...base, keyFile: '/etc/key.json' }).keyFile).toBe('/etc/key.json');
    expect(BigQuerySettingsSchema.parse({ ...base, credentials: key }).credentials).toEqual(key);
    expect(BigQuerySettingsSchema.safeParse({ ...base, credentials: { nope: 1 } }).success).toBe(false);
    expect(BigQuerySettingsSchema.safeParse({ ...base, keyFile: '/k.json', credentials: key }).success).toBe(false);
  });

  it('refuses bad ids, a non-http endpoint, unknown fields and two tables with one name', () => {
    expect(BigQuerySettingsSchema.safeParse({ ...base, projectId: 'My Project' }).success).toBe(false);
    expect(BigQuerySettingsSchema.safeParse({ ...base, dataset: 'my-dataset' }).success).toBe(false);
    expect(BigQuerySettingsSchema.safeParse({ ...base, endpoint: 'ftp://x' }).success).toBe(false);
    expect(BigQuerySettingsSchema.safeParse({ ...base, table: 'x' }).success).toBe(false);
    expect(BigQuerySettingsSchema.safeParse({ ...base, tables: { users: 'events' } }).success).toBe(false);
  });

  it('sends no credentials to a custom endpoint unless given some, and turns the library’s retries off', () => {
    const local = clientOptions(resolveSettings(BigQuerySettingsSchema.parse({ ...base, endpoint: 'http://127.0.0.1:9050/' })));
    expect(local).toMatchObject({ apiEndpoint: 'http://127.0.0.1:9050', autoRetry: false, maxRetries: 0 });
    expect(local.authClient?.constructor.name).toBe('PassThroughClient');
    const keyed = clientOptions(resolveSettings(BigQuerySettingsSchema.parse({ ...base, endpoint: 'http://127.0.0.1:9050', keyFile: '/k.json' })));
    expect(keyed.authClient).toBeUndefined();
    expect(keyed.keyFilename).toBe('/k.json');
    expect(clientOptions(resolveSettings(BigQuerySettingsSchema.parse(base))).authClient).toBeUndefined();
  });
});
