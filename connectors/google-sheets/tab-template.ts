/**
 * The `tab` setting: a template for the name of the events tab, e.g. `{_event}` for one tab per
 * event name, or `events {_event}`. Sheets takes tab names of up to 100 characters, and compares
 * them without regard to case; the name made from a template is cleaned so that any event name
 * gives a tab Sheets accepts, with room left for the monthly rollover's `_2026_11`.
 */

/** The fields a template may name. */
export const TAB_TEMPLATE_FIELDS = ['_event'] as const;

/** Longest name a template gives, before the rollover's suffix (8 characters) and within Sheets' 100. */
const MAX_TAB_NAME = 90;

const PLACEHOLDER = /\{([^{}]*)\}/g;

/** What is wrong with a template, naming the field and its position (1-based), or undefined. */
export function tabTemplateProblem(template: string): string | undefined {
  for (const match of template.matchAll(PLACEHOLDER)) {
    const field = match[1]!;
    if (!(TAB_TEMPLATE_FIELDS as readonly string[]).includes(field)) {
      return `{${field}} at column ${match.index + 1} is not a field a tab can be named by; use ${TAB_TEMPLATE_FIELDS.map((f) => `{${f}}`).join(', ')}`;
    }
  }
  // Fields blanked out in place, so that a brace left over is found at its own column.
  const stray = template.replace(PLACEHOLDER, (m) => ' '.repeat(m.length)).search(/[{}]/);
  if (stray >= 0) return `an unmatched ${template[stray]} at column ${stray + 1}: write fields as {_event}`;
  if (!template.includes('{')) return 'a tab template names at least one field, e.g. {_event}; for a fixed name use tabs.events';
  return undefined;
}

/** Control characters become spaces, runs of spaces one, and the name is cut (never inside a surrogate pair). */
function clean(name: string): string {
  let text = name.replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/\s+/g, ' ').trim();
  if (text.length > MAX_TAB_NAME) {
    text = text.slice(0, MAX_TAB_NAME);
    if (/[\ud800-\udbff]$/.test(text)) text = text.slice(0, -1);
    text = text.trimEnd();
  }
  return text === '' ? '(none)' : text;
}

/** The tab name `template` gives an event. */
export function renderTab(template: string, event: string | undefined): string {
  return clean(template.replace(PLACEHOLDER, () => event ?? ''));
}
