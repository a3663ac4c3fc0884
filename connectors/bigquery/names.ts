import { createHash } from 'node:crypto';

/**
 * BigQuery column names (https://cloud.google.com/bigquery/docs/schemas#column_names): letters,
 * digits and underscores, starting with a letter or underscore, at most 300 characters, none of
 * the reserved prefixes (`_TABLE_`, `_FILE_`, `_PARTITION`, `_ROW_TIMESTAMP`, `__ROOT__`,
 * `_COLIDENTIFIER`, `_CHANGE_*`), and two names that differ only in case are the same column.
 * Flexible column names (Unicode, spaces) are not used: every tool reading the table can handle
 * the classic rules.
 */
export const MAX_COLUMN_NAME = 300;

/** Tributary's record of which property a column holds: `tributary property: <name>` in the column description. */
export const DESCRIPTION_PREFIX = 'tributary property: ';
/** BigQuery's limit on a column description. */
const MAX_DESCRIPTION = 1024;

/**
 * The column name a property would get if nothing else claimed it:
 * 1. every character other than A–Z, a–z, 0–9 and `_` becomes `_` (`page title` → `page_title`,
 *    `prénom` → `pr_nom`);
 * 2. a name that then does not start with a letter gets `p_` in front (`2fa` → `p_2fa`, `$ref` →
 *    `p__ref`, `__proto__` → `p___proto__`); so no property column ever starts with `_`, which
 *    keeps clear of Tributary's own columns and of every reserved prefix;
 * 3. the result is cut to 300 characters.
 */
export function baseColumnName(property: string): string {
  let name = property.replace(/[^A-Za-z0-9_]/g, '_');
  if (!/^[A-Za-z]/.test(name)) name = `p_${name}`;
  return name.slice(0, MAX_COLUMN_NAME);
}

/**
 * The fallback when the base name is taken (case-insensitively) by another property's column,
 * e.g. `Plan` after `plan`, or `page-title` after `page title`: the base cut to 291 characters,
 * `_`, and the first 8 hex digits of the SHA-256 of the property name (`Plan` → `Plan_fa8ed0bd`).
 * It depends on the name alone, so it is the same in every table and every run.
 */
export function hashedColumnName(property: string): string {
  const hash = createHash('sha256').update(property, 'utf8').digest('hex').slice(0, 8);
  return `${baseColumnName(property).slice(0, MAX_COLUMN_NAME - 9)}_${hash}`;
}

export function ownerDescription(property: string): string | undefined {
  const text = `${DESCRIPTION_PREFIX}${property}`;
  return text.length <= MAX_DESCRIPTION ? text : undefined;
}

/** The property a column holds: the one named in its description, else the column's own name (a column added by hand). */
export function ownerOf(column: { name: string; description?: string }): string {
  return column.description?.startsWith(DESCRIPTION_PREFIX) ? column.description.slice(DESCRIPTION_PREFIX.length) : column.name;
}

/** Column names are compared as BigQuery does: ignoring case. */
export const foldName = (name: string): string => name.toLowerCase();
