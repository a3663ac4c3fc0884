import { nullProtoObject, type JsonValue, type Properties } from '../records/types';

/**
 * What a destination's rules do to a record's properties, in this order: `flatten` nested objects
 * into columns, then `keep` or `drop` properties by name, then `rename` what is left. Reserved
 * fields are never touched: they are not properties. Pure: the record's own properties are never
 * changed, a new object is made.
 */

export interface FlattenOptions {
  /** Between a parent's name and a child's: `address_city`. Default `_`. */
  separator: string;
  /** Levels of nesting flattened; an object deeper than this stays one JSON value. Default 10. */
  depth: number;
}

export interface ShapeOptions {
  flatten?: FlattenOptions;
  /** Only these properties go (names after flattening; `*` matches any run of characters). */
  keep?: readonly string[];
  /** These properties never go (same patterns). */
  drop?: readonly string[];
  /** Old name → new name, after keep/drop. */
  rename?: Readonly<Record<string, string>>;
}

/** A name pattern of keep/drop: a literal name, or with `*` for any run of characters (`utm_*`). */
export type NameMatcher = (name: string) => boolean;

export function nameMatcher(patterns: readonly string[]): NameMatcher {
  const exact = new Set(patterns.filter((p) => !p.includes('*')));
  const wild = patterns.filter((p) => p.includes('*')).map((p) => new RegExp(`^${p.split('*').map(escapeRegExp).join('.*')}$`, 's'));
  if (wild.length === 0) return (name) => exact.has(name);
  return (name) => exact.has(name) || wild.some((re) => re.test(name));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isObject(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * ShapeOptions made ready for records: matchers compiled, defaults filled. One instance shapes one
 * record at a time (shaping is synchronous); its per-record state lives in two fields rather than
 * in an object spread per record, which cost V8 about 3 µs a record.
 */
class Shaper {
  private readonly depth: number;
  private readonly separator: string;
  private readonly keep: NameMatcher | undefined;
  private readonly drop: NameMatcher | undefined;
  private readonly renames: Readonly<Record<string, string>> | undefined;
  /** Names renames produce: only a property with one of these names can meet a value already placed. */
  private readonly targets: ReadonlySet<string>;
  private properties: Properties = nullProtoObject();
  private out: Properties = nullProtoObject();

  constructor(options: ShapeOptions, renames: Readonly<Record<string, string>> | undefined) {
    this.depth = options.flatten?.depth ?? 0;
    this.separator = options.flatten?.separator ?? '_';
    this.keep = options.keep ? nameMatcher(options.keep) : undefined;
    this.drop = options.drop ? nameMatcher(options.drop) : undefined;
    this.renames = renames;
    this.targets = new Set(Object.values(renames ?? {}));
  }

  shape(properties: Properties): Properties {
    this.properties = properties;
    const out = (this.out = nullProtoObject<Properties>());
    for (const key of Object.keys(properties)) this.visit(key, properties[key]!, 0);
    return out;
  }

  private visit(path: string, value: JsonValue, level: number): void {
    if (level < this.depth && isObject(value)) {
      const keys = Object.keys(value);
      if (keys.length > 0) {
        for (const key of keys) this.visit(`${path}${this.separator}${key}`, value[key]!, level + 1);
        return;
      }
    }
    this.place(path, value, level > 0);
  }

  /** Puts one leaf in the output, selected and renamed; `flattened`: its name was made by flattening. */
  private place(path: string, value: JsonValue, flattened: boolean): void {
    if (this.keep && !this.keep(path)) return;
    if (this.drop?.(path)) return;
    // What the client named explicitly wins over what flattening made; of two flattened, the first.
    if (flattened && (Object.hasOwn(this.properties, path) || Object.hasOwn(this.out, path))) return;
    const to = this.renames && Object.hasOwn(this.renames, path) ? this.renames[path]! : path;
    // A renamed property replaces one that already had its new name, never the other way round.
    if (to === path && this.targets.has(path) && Object.hasOwn(this.out, path)) return;
    this.out[to] = value;
  }
}

/**
 * A compiled ShapeOptions: one function from properties to properties, or none when there is
 * nothing to do. One pass over the record, flattening, selecting and renaming each leaf as it is
 * met, rather than a flattened copy made first and filtered after: a record costs one new object.
 * Flattening names nested objects' leaves by their path (`address.city` → `address_city`), up to
 * `depth` levels; arrays and empty objects stay one value. A property that already has a flattened
 * name keeps its own value (what the client named explicitly wins; of two flattened, the first),
 * and a renamed property replaces one that already had its new name.
 */
export function compileShape(options: ShapeOptions): ((properties: Properties) => Properties) | undefined {
  const renames = options.rename && Object.keys(options.rename).length > 0 ? options.rename : undefined;
  if (!options.flatten && !options.keep && !options.drop && !renames) return undefined;
  const shaper = new Shaper(options, renames);
  return (properties) => shaper.shape(properties);
}
