import type { Environment, ParseResult } from '@marcbachmann/cel-js';
import type { JsonValue, TrackedRecord } from '../records/types';

/**
 * A destination's `filter`: a CEL expression (https://cel.dev) over one record, compiled once and
 * evaluated per record. CEL is not Turing-complete and has no way out of the values it is given,
 * so an expression typed into the console cannot run code, loop for ever or reach the host.
 *
 * Variables, by name: `_type` (`user`, `session` or `event`), the reserved fields (`_id`, `_uid`,
 * `_sid`, `_event`, `_event_at`, `_received_at`; null where the record has none, e.g. `_event` on a
 * user), every property of the record, and `record`, the whole record as a map (reserved fields
 * and properties), for names that are not identifiers: `record['plan name']`.
 *
 * A property the record does not have is an error, as is a type mismatch (`total > 'x'`): the
 * record does not match, and the error is counted (RuleVerdict `error`). CEL's `&&` and `||` absorb
 * errors where the other side decides, so `_type != 'event' || total >= 10` passes a user that has
 * no `total`. `has(record.plan)` tests for a property.
 *
 * Numbers: a JSON number is a CEL `double`, an integer beyond 2^53 (kept exact, see exact-json.ts)
 * an `int`. Comparisons mix them freely (`total >= 10`); arithmetic wants one type (`int(n) % 2`).
 */

let environment: Environment | undefined;

/**
 * The evaluator, loaded with the first filter: it takes 40–60 ms to load, which a CLI command that
 * never meets a filter should not pay. Its limits bound what one filter may be: far above any
 * real filter, well below what would cost a routing step.
 */
function celEnvironment(): Environment {
  if (!environment) {
    const cel = require('@marcbachmann/cel-js') as typeof import('@marcbachmann/cel-js');
    environment = new cel.Environment({
      unlistedVariablesAreDyn: true,
      homogeneousAggregateLiterals: false,
      enableOptionalTypes: true,
      limits: { maxAstNodes: 2000, maxDepth: 50, maxListElements: 1000, maxMapEntries: 1000, maxCallArguments: 16 },
    });
  }
  return environment;
}

/** The longest filter text: a list of a thousand event names fits. */
export const MAX_FILTER_LENGTH = 20_000;

/** Why a filter was refused, with where (1-based column of its text) when the parser knows. */
export interface FilterProblem {
  message: string;
  /** 1-based column in the filter's text. */
  column?: number;
}

/** What one record gives a filter. */
export type FilterResult = { matched: boolean } | { error: string };

export interface CompiledFilter {
  readonly text: string;
  test(record: TrackedRecord): FilterResult;
}

const RESERVED_VARIABLES = new Set(['_type', '_id', '_uid', '_sid', '_event', '_event_at', '_received_at', 'record']);

function reservedValue(record: TrackedRecord, name: string): JsonValue | undefined {
  switch (name) {
    case '_type':
      return record.kind;
    case '_id':
      return record.id;
    case '_uid':
      return record.uid ?? null;
    case '_sid':
      return record.sid ?? null;
    case '_event':
      return record.event ?? null;
    case '_event_at':
      return record.eventAt ?? null;
    case '_received_at':
      return record.receivedAt;
    default:
      return undefined;
  }
}

/** The whole record as one map, for `record[...]`: reserved fields first, then the properties. */
function recordMap(record: TrackedRecord): Record<string, JsonValue> {
  const map = Object.setPrototypeOf({}, null) as Record<string, JsonValue>;
  for (const name of RESERVED_VARIABLES) {
    const value = reservedValue(record, name);
    if (value !== undefined && value !== null) map[name] = value;
  }
  for (const key of Object.keys(record.properties)) if (!RESERVED_VARIABLES.has(key)) map[key] = record.properties[key]!;
  return map;
}

/**
 * The variables of one record, read by name as the evaluator asks for them: nothing is copied
 * unless `record` is used. One view serves every record (its target changes), so a record costs
 * no allocation. Only own properties count: `constructor` is not found on a record without one.
 */
class RecordVariables {
  record: TrackedRecord | undefined;
  private map: Record<string, JsonValue> | undefined;
  readonly view = new Proxy(Object.setPrototypeOf({}, null) as Record<string, unknown>, {
    get: (_target, name) => {
      const record = this.record!;
      if (typeof name !== 'string') return undefined;
      if (RESERVED_VARIABLES.has(name)) return name === 'record' ? (this.map ??= recordMap(record)) : reservedValue(record, name);
      return Object.hasOwn(record.properties, name) ? record.properties[name] : undefined;
    },
  });

  of(record: TrackedRecord): Record<string, unknown> {
    this.record = record;
    this.map = undefined;
    return this.view;
  }
}

function problemOf(err: unknown): FilterProblem {
  const e = err as { summary?: unknown; message?: unknown; range?: { start?: unknown } };
  const message = typeof e.summary === 'string' ? e.summary : String(e.message ?? err);
  return typeof e.range?.start === 'number' ? { message, column: e.range.start + 1 } : { message };
}

/** Compiles a filter, or says what is wrong with it and where. */
export function compileFilter(text: string): CompiledFilter | FilterProblem {
  if (text.trim() === '') return { message: 'the filter is empty' };
  if (text.length > MAX_FILTER_LENGTH) return { message: `the filter is ${text.length} characters long; at most ${MAX_FILTER_LENGTH}` };
  let program: ParseResult;
  try {
    program = celEnvironment().parse(text);
  } catch (err) {
    return problemOf(err);
  }
  const checked = program.check();
  if (!checked.valid) return problemOf(checked.error);
  if (checked.type !== 'bool' && checked.type !== 'dyn') return { message: `the filter must be true or false for a record, and this one gives ${checked.type === undefined ? 'another value' : `a value of type ${checked.type}`}`, column: 1 };
  const variables = new RecordVariables();
  return {
    text,
    test(record) {
      try {
        const value: unknown = program(variables.of(record));
        if (typeof value === 'boolean') return { matched: value };
        return { error: `the filter gave ${value === null ? 'null' : typeof value}, not true or false` };
      } catch (err) {
        return { error: problemOf(err).message };
      }
    },
  };
}

export function isFilterProblem(compiled: CompiledFilter | FilterProblem): compiled is FilterProblem {
  return !('test' in compiled);
}
