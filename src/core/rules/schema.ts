import * as z from 'zod';
import { compileFilter, isFilterProblem, MAX_FILTER_LENGTH } from './filter';

/**
 * A destination's rules: which records it receives (`filter`, `sample`) and in what shape
 * (`flatten`, `keep` or `drop`, `rename`). Checked whole before a destination is saved, whichever
 * door it comes through (CLI, console, admin API, config file), each refusal naming the rule and,
 * for a filter, the column where its text goes wrong.
 */

/** Names no rule may produce or select: the reserved fields are not properties and always go as they are. */
const RESERVED_NAMES = ['_id', '_uid', '_sid', '_event', '_event_at', '_received_at', '_type', '_context', '_properties'];
const isReserved = (name: string) => RESERVED_NAMES.includes(name.toLowerCase());

const propertyName = z.string().min(1, 'a property name is not empty').max(256, 'a property name has at most 256 characters');

export const FlattenRuleSchema = z.union([
  z.literal(true),
  z.strictObject({
    /** Between a parent's name and a child's. Default `_`. */
    separator: z.string().min(1).max(8).optional(),
    /** Levels of nesting flattened. Default 10 (all of them, within the relay's depth limit). */
    depth: z.number().int().min(1).max(10).optional(),
  }),
]);

export const SampleRuleSchema = z.strictObject({
  /** The share of records delivered, above 0 and at most 1. */
  rate: z.number().gt(0, 'a sample rate is above 0').max(1, 'a sample rate is at most 1 (every record)'),
  /** The field whose value decides, so that all records with one value are in or out together. Default `_uid` (else `_id`). */
  by: propertyName.optional(),
});

export const DestinationRulesSchema = z
  .strictObject({
    /** A CEL expression: the destination receives the records for which it is true (src/core/rules/filter.ts). */
    filter: z.string().max(MAX_FILTER_LENGTH).optional(),
    sample: SampleRuleSchema.optional(),
    /** Only these properties go (`*` matches any run of characters, e.g. `utm_*`). */
    keep: z.array(propertyName).min(1).max(1000).optional(),
    /** These properties never go. */
    drop: z.array(propertyName).min(1).max(1000).optional(),
    /** Old name → new name. */
    rename: z.record(propertyName, propertyName).optional(),
    /** Nested objects become properties named by their path: `address.city` → `address_city`. */
    flatten: FlattenRuleSchema.optional(),
  })
  .superRefine((rules, ctx) => {
    if (rules.filter !== undefined) {
      const compiled = compileFilter(rules.filter);
      if (isFilterProblem(compiled)) ctx.addIssue({ code: 'custom', path: ['filter'], message: compiled.column === undefined ? compiled.message : `at column ${compiled.column}: ${compiled.message}` });
    }
    if (rules.keep && rules.drop) ctx.addIssue({ code: 'custom', path: ['drop'], message: 'give keep (the properties that go) or drop (those that do not), not both' });
    for (const list of ['keep', 'drop'] as const) {
      const reserved = rules[list]?.find(isReserved);
      if (reserved) ctx.addIssue({ code: 'custom', path: [list], message: `${reserved} is a reserved field, which always goes as it is; ${list} names properties` });
    }
    const targets = new Map<string, string>();
    for (const [from, to] of Object.entries(rules.rename ?? {})) {
      if (isReserved(from)) ctx.addIssue({ code: 'custom', path: ['rename', from], message: `${from} is a reserved field and cannot be renamed` });
      if (isReserved(to)) ctx.addIssue({ code: 'custom', path: ['rename', from], message: `${from}=${to}: ${to} is a reserved name; choose another` });
      const other = targets.get(to.toLowerCase());
      if (other !== undefined) ctx.addIssue({ code: 'custom', path: ['rename', from], message: `${from}=${to} and ${other}=${to} rename two properties onto one name` });
      targets.set(to.toLowerCase(), from);
    }
  });

export type DestinationRules = z.infer<typeof DestinationRulesSchema>;

/** Whether a destination has rules that do anything. */
export function hasRules(rules: DestinationRules | undefined): rules is DestinationRules {
  return rules !== undefined && Object.values(rules).some((v) => v !== undefined);
}
