import { InvalidArgumentError, type Command } from 'commander';
import type { DestinationRules } from '../core/rules/schema';

/** The rule flags of `destinations add`, `update` and `preview`, as commander parses them. */
export interface RuleFlags {
  filter?: string;
  sample?: number;
  sampleBy?: string;
  keep?: string[];
  drop?: string[];
  rename?: Record<string, string>;
  flatten?: boolean;
  flattenSeparator?: string;
  flattenDepth?: number;
  clearRules?: boolean;
}

function rate(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new InvalidArgumentError('expected a share above 0 and at most 1, e.g. 0.1 for 10 %.');
  return n;
}

function depth(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10) throw new InvalidArgumentError('expected a whole number of levels from 1 to 10.');
  return n;
}

/** `a,b,c`, repeatable: `--keep a,b --keep c`. */
function names(value: string, previous: string[] | undefined): string[] {
  const list = value.split(',').map((n) => n.trim()).filter(Boolean);
  if (list.length === 0) throw new InvalidArgumentError('expected property names separated by commas, e.g. total,currency.');
  return [...(previous ?? []), ...list];
}

function renamePair(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq <= 0 || eq === value.length - 1) throw new InvalidArgumentError(`expected old=new, e.g. total=amount; got ${value}.`);
  const from = value.slice(0, eq);
  if (previous && Object.hasOwn(previous, from)) throw new InvalidArgumentError(`${from} is renamed twice.`);
  return { ...previous, [from]: value.slice(eq + 1) };
}

/** Adds the rule flags to a command; `clear` adds --clear-rules too (update). */
export function addRuleOptions(command: Command, clear: boolean): Command {
  command
    .option('--filter <expression>', "deliver only the records for which this CEL expression is true, e.g. \"_type == 'event' && _event in ['signup', 'order']\"")
    .option('--sample <rate>', 'deliver this share of records, e.g. 0.1; deterministic per --sample-by value', rate)
    .option('--sample-by <field>', 'the field whose value decides the sample (default _uid, else _id)')
    .option('--keep <names>', 'only these properties go, comma-separated (* matches any run of characters: utm_*); repeatable', names)
    .option('--drop <names>', 'these properties never go, comma-separated; repeatable', names)
    .option('--rename <old=new>', 'rename a property; repeatable', renamePair)
    .option('--flatten', 'nested objects become properties joined with _: address.city → address_city')
    .option('--flatten-separator <text>', 'what joins flattened names (implies --flatten; default _)')
    .option('--flatten-depth <levels>', 'how many levels are flattened (implies --flatten; default 10)', depth);
  if (clear) command.option('--clear-rules', 'remove every rule first (flags given with it then set new ones)');
  return command;
}

/** Whether any rule flag was given. */
export function givesRules(flags: RuleFlags): boolean {
  return [flags.filter, flags.sample, flags.sampleBy, flags.keep, flags.drop, flags.rename, flags.flatten, flags.flattenSeparator, flags.flattenDepth, flags.clearRules].some((v) => v !== undefined);
}

/**
 * The rules the flags make of `current`: each rule given replaces the rule of its kind, the others
 * stay; `--clear-rules` starts from none. Undefined when no flag was given (nothing changes); null
 * when no rule is left.
 */
export function rulesFromFlags(current: DestinationRules | undefined, flags: RuleFlags): DestinationRules | null | undefined {
  if (!givesRules(flags)) return undefined;
  const rules: Record<string, unknown> = flags.clearRules ? {} : { ...current };
  if (flags.filter !== undefined) rules.filter = flags.filter;
  if (flags.sample !== undefined || flags.sampleBy !== undefined) {
    const sample = (rules.sample as DestinationRules['sample']) ?? undefined;
    rules.sample = { rate: flags.sample ?? sample?.rate ?? 1, ...(flags.sampleBy ?? sample?.by ? { by: flags.sampleBy ?? sample?.by } : {}) };
  }
  if (flags.keep !== undefined) {
    rules.keep = flags.keep;
    delete rules.drop;
  }
  if (flags.drop !== undefined) {
    rules.drop = flags.drop;
    if (flags.keep === undefined) delete rules.keep;
  }
  if (flags.rename !== undefined) rules.rename = flags.rename;
  if (flags.flatten !== undefined || flags.flattenSeparator !== undefined || flags.flattenDepth !== undefined) {
    const options = { ...(flags.flattenSeparator !== undefined ? { separator: flags.flattenSeparator } : {}), ...(flags.flattenDepth !== undefined ? { depth: flags.flattenDepth } : {}) };
    rules.flatten = Object.keys(options).length > 0 ? options : true;
  }
  return Object.keys(rules).length === 0 ? null : (rules as DestinationRules);
}
