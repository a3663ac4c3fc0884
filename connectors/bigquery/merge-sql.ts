/** A backticked table path; each part quoted on its own, as GoogleSQL allows. */
export const tablePath = (projectId: string, dataset: string, table: string): string => `\`${projectId}\`.\`${dataset}\`.\`${table}\``;

/** A backticked column name. Sanitized names need no escaping, but may be keywords (`order`, `from`). */
const col = (name: string): string => `\`${name}\``;

/** A column the MERGE writes; `param` is its field in the `@rows` STRUCT (`c0`, `c1`…). */
export interface MergeColumn {
  name: string;
  /** BigQuery type of the STRUCT field: STRING, INT64, FLOAT64, BOOL, JSON, TIMESTAMP. */
  type: string;
  /** Keep the stored value when the update has none (`COALESCE`): a session's `_uid`, `_context`. */
  keepStored?: boolean;
}

export const paramName = (i: number): string => `c${i}`;

/** Reads the stored `_properties` of the keys in `@keys`. */
export function readStoredSql(path: string, key: string): string {
  return `SELECT t.${col(key)} AS k, t.\`_properties\` AS p FROM ${path} AS t WHERE t.${col(key)} IN UNNEST(@keys)`;
}

/**
 * One MERGE for a batch of users or sessions, with the rows as an `ARRAY<STRUCT<…>>` parameter.
 * Rows are never streamed into these tables: rows in the streaming buffer cannot be updated by
 * DML (https://cloud.google.com/bigquery/docs/data-manipulation-language#limitations). The batch
 * holds one row per key (coalesced first), since MERGE refuses several source rows for one target
 * row. Every listed column is assigned the merged state's value; columns not listed keep theirs.
 */
export function mergeSql(path: string, key: string, columns: readonly MergeColumn[]): string {
  const k = columns.findIndex((c) => c.name === key);
  if (k < 0) throw new Error(`the MERGE columns must include the key ${key}`);
  const sets = columns
    .map((c, i) => ({ c, i }))
    .filter(({ c }) => c.name !== key)
    .map(({ c, i }) => `${col(c.name)} = ${c.keepStored ? `COALESCE(s.${paramName(i)}, t.${col(c.name)})` : `s.${paramName(i)}`}`);
  return [
    `MERGE INTO ${path} AS t`,
    `USING (SELECT * FROM UNNEST(@rows)) AS s`,
    `ON t.${col(key)} = s.${paramName(k)}`,
    `WHEN MATCHED THEN UPDATE SET ${sets.join(', ')}`,
    `WHEN NOT MATCHED THEN INSERT (${columns.map((c) => col(c.name)).join(', ')}) VALUES (${columns.map((_, i) => `s.${paramName(i)}`).join(', ')})`,
  ].join('\n');
}
