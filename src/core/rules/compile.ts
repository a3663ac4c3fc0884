import type { TrackedRecord } from '../records/types';
import { compileFilter, isFilterProblem, type CompiledFilter } from './filter';
import { sampledIn } from './sample';
import type { DestinationRules } from './schema';
import { compileShape } from './shape';

/** What a destination's rules make of one record. */
export type RuleVerdict =
  /** Delivered, in this shape (the record itself when no rule changes it). */
  | { kind: 'deliver'; record: TrackedRecord }
  /** Not delivered: the filter was false, or the record fell outside the sample. */
  | { kind: 'skip'; rule: 'filter' | 'sample' }
  /** Not delivered: the filter could not be evaluated on it (a missing property, a type mismatch). */
  | { kind: 'error'; message: string };

export interface CompiledRules {
  apply(record: TrackedRecord): RuleVerdict;
}

const DEFAULT_FLATTEN = { separator: '_', depth: 10 } as const;

/** A filter that no longer compiles (it was checked when saved) matches nothing, and says why on every record. */
function brokenFilter(message: string): CompiledFilter {
  return { text: '', test: () => ({ error: `the filter does not compile: ${message}` }) };
}

/**
 * Rules compiled once for every record: the filter first, on the record as accepted, then the
 * sample, then the shape. Order matters for the reader too: a filter names properties as clients
 * send them, before any rename.
 */
export function compileRules(rules: DestinationRules): CompiledRules {
  let filter: CompiledFilter | undefined;
  if (rules.filter !== undefined) {
    const compiled = compileFilter(rules.filter);
    filter = isFilterProblem(compiled) ? brokenFilter(compiled.message) : compiled;
  }
  const sample = rules.sample;
  const flatten = rules.flatten === undefined ? undefined : rules.flatten === true ? DEFAULT_FLATTEN : { ...DEFAULT_FLATTEN, ...rules.flatten };
  const shape = compileShape({ ...(flatten ? { flatten } : {}), ...(rules.keep ? { keep: rules.keep } : {}), ...(rules.drop ? { drop: rules.drop } : {}), ...(rules.rename ? { rename: rules.rename } : {}) });
  return {
    apply(record) {
      if (filter) {
        const result = filter.test(record);
        if ('error' in result) return { kind: 'error', message: result.error };
        if (!result.matched) return { kind: 'skip', rule: 'filter' };
      }
      if (sample && !sampledIn(record, sample.rate, sample.by)) return { kind: 'skip', rule: 'sample' };
      return { kind: 'deliver', record: shape ? { ...record, properties: shape(record.properties) } : record };
    },
  };
}

/**
 * Compiled rules by their text, so that a router reading the same tracker every second compiles
 * each destination's rules once. Bounded: rules that are no longer anyone's are dropped with the rest.
 */
export class RulesCache {
  private readonly byText = new Map<string, CompiledRules>();

  constructor(private readonly max = 1000) {}

  /** `text`: the rules' JSON, when the caller has it already. */
  get(rules: DestinationRules, text = JSON.stringify(rules)): CompiledRules {
    let compiled = this.byText.get(text);
    if (!compiled) {
      if (this.byText.size >= this.max) this.byText.clear();
      this.byText.set(text, (compiled = compileRules(rules)));
    }
    return compiled;
  }
}
