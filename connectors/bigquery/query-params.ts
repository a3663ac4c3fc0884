/**
 * Query parameters in the REST shape of jobs.query
 * (https://cloud.google.com/bigquery/docs/reference/rest/v2/QueryParameter): every scalar value
 * is text (INT64 and FLOAT64 as decimal text, BOOL as `true`/`false`, TIMESTAMP as RFC 3339, JSON
 * as JSON text), `null` is NULL.
 */
export interface ParameterType {
  type: string;
  arrayType?: ParameterType;
  structTypes?: Array<{ name: string; type: ParameterType }>;
}

export interface ParameterValue {
  value?: string | null;
  arrayValues?: ParameterValue[];
  structValues?: Record<string, ParameterValue>;
}

export interface QueryParameter {
  name: string;
  parameterType: ParameterType;
  parameterValue: ParameterValue;
}

/** `ARRAY<STRING>`, e.g. the keys whose stored state a MERGE needs. */
export function stringArray(name: string, values: readonly string[]): QueryParameter {
  return { name, parameterType: { type: 'ARRAY', arrayType: { type: 'STRING' } }, parameterValue: { arrayValues: values.map((value) => ({ value })) } };
}

/** A `TIMESTAMP` scalar. */
export function timestamp(name: string, at: Date): QueryParameter {
  return { name, parameterType: { type: 'TIMESTAMP' }, parameterValue: { value: at.toISOString() } };
}

/** `ARRAY<STRUCT<c0 type0, c1 type1, …>>` from rows of cells in field order. */
export function structArray(name: string, fieldTypes: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | null>>): QueryParameter {
  const fields = fieldTypes.map((_, i) => `c${i}`);
  return {
    name,
    parameterType: { type: 'ARRAY', arrayType: { type: 'STRUCT', structTypes: fieldTypes.map((type, i) => ({ name: fields[i]!, type: { type } })) } },
    parameterValue: { arrayValues: rows.map((cells) => ({ structValues: Object.fromEntries(cells.map((value, i) => [fields[i]!, { value }])) })) },
  };
}

/** A jobs.query / jobs.getQueryResults answer, as far as the connector reads it. */
export interface QueryResponse {
  jobComplete?: boolean;
  jobReference?: { jobId?: string; location?: string };
  pageToken?: string;
  schema?: { fields?: Array<{ name: string }> };
  rows?: Array<{ f: Array<{ v: unknown }> }>;
}

/** Result rows as objects by column name; values as the API sends them (text, or null). */
export function rowObjects(fields: ReadonlyArray<{ name: string }>, rows: NonNullable<QueryResponse['rows']>): Array<Record<string, string | null>> {
  return rows.map((r) => Object.fromEntries(fields.map((f, i) => [f.name, typeof r.f[i]?.v === 'string' ? (r.f[i]!.v as string) : null])));
}
