import { rewrite, tokenize, type Resolver } from './dialect';

/** The GoogleSQL → DuckDB rewrite, without a server. */
const resolver: Resolver = {
  table(parts) {
    const [projectId, datasetId, tableId] = parts.length === 3 ? parts : ['proj', ...parts];
    if (!datasetId || !tableId) throw new Error(`unqualified ${parts.join('.')}`);
    return { ref: `"${projectId}.${datasetId}"."${tableId}"`, name: { projectId: projectId!, datasetId, tableId } };
  },
};

it('tokenizes BigQuery strings with escapes, raw strings and backticked names', () => {
  const tokens = tokenize(`SELECT 'it\\'s', "a\\nb", r'\\d+', \`my col\` -- note`).filter((t) => t.kind === 'string' || t.kind === 'quoted');
  expect(tokens.map((t) => t.value)).toEqual(["it's", 'a\nb', '\\d+', 'my col']);
});

it('rewrites table paths in one or several backtick pairs, identifiers and literals', () => {
  const r = rewrite("SELECT t.`plan`, \"x\" AS s FROM `proj.ds.users` AS t JOIN `proj`.`ds`.`sessions` s ON t.`_uid` = s.`_uid` WHERE t.n > 1", resolver);
  expect(r.sql).toBe(`SELECT t."plan", 'x' AS s FROM "proj.ds"."users" AS t JOIN "proj.ds"."sessions" s ON t."_uid" = s."_uid" WHERE t.n > 1`);
  expect(r.tables.map((t) => t.tableId)).toEqual(['users', 'sessions']);
  expect(r.kind).toBe('SELECT');
});

it('turns UNNEST(@array) into a parameter table and @scalar into a named parameter', () => {
  const r = rewrite('SELECT k FROM `proj.ds.t` WHERE k IN UNNEST(@keys) AND n > @min', resolver);
  expect(r.sql).toBe(`SELECT k FROM "proj.ds"."t" WHERE k IN (SELECT * FROM "__param_keys") AND n > $min`);
  expect(r.arrayParams).toEqual(['keys']);
});

it('maps types after AS and BigQuery functions', () => {
  const r = rewrite("SELECT SAFE_CAST(x AS INT64), CAST(y AS STRING), JSON_VALUE(p, '$.a'), TIMESTAMP('2026-01-01'), TIMESTAMP '2026-01-01' FROM ds.t", resolver);
  expect(r.sql).toBe(`SELECT TRY_CAST(x AS BIGINT), CAST(y AS VARCHAR), json_extract_string(p, '$.a'), bq_timestamp('2026-01-01'), TIMESTAMPTZ '2026-01-01' FROM "proj.ds"."t"`);
});

it('splits a MERGE into target, source and condition, and does not take UPDATE SET for a table', () => {
  const r = rewrite('MERGE `proj.ds.users` t USING (SELECT * FROM UNNEST(@rows)) AS s ON t._uid = s.c0 WHEN MATCHED THEN UPDATE SET plan = s.c1 WHEN NOT MATCHED THEN INSERT (_uid) VALUES (s.c0)', resolver);
  expect(r.kind).toBe('MERGE');
  expect(r.sql.startsWith('MERGE INTO "proj.ds"."users" t USING')).toBe(true);
  expect(r.merge).toEqual({ target: '"proj.ds"."users" t', targetAlias: 't', source: '(SELECT * FROM (SELECT * FROM "__param_rows")) AS s', on: 't._uid = s.c0' });
  expect(r.tables.map((t) => t.tableId)).toEqual(['users']);
});

it('refuses scripts and statements it does not run', () => {
  expect(() => rewrite('SELECT 1; SELECT 2', resolver)).toThrow(/one statement per query/);
  expect(() => rewrite('CREATE TABLE x (a INT64)', resolver)).toThrow(/not supported/);
});
