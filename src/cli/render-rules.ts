import { stringifyExactJson } from '../core/records/exact-json';
import type { TrackedRecord } from '../core/records/types';
import type { DestinationRules } from '../core/rules/schema';
import type { Destination } from '../core/trackers/types';
import { redactingReplacer } from '../core/redact';
import type { BackfillView, DestinationView } from '../operator/delivery-admin';
import type { RulesPreview } from '../operator/rules-preview';
import { table } from './render';

/** One line per rule, in the order they apply. */
export function ruleLines(rules: DestinationRules | undefined): string[] {
  if (!rules) return ['none: every record, as accepted'];
  const lines: string[] = [];
  if (rules.filter !== undefined) lines.push(`filter   ${rules.filter}`);
  if (rules.sample) lines.push(`sample   ${rules.sample.rate * 100} % by ${rules.sample.by ?? '_uid (else _id)'}`);
  if (rules.flatten) {
    const f = rules.flatten === true ? {} : rules.flatten;
    lines.push(`flatten  nested objects joined with "${f.separator ?? '_'}", ${f.depth ?? 10} level${(f.depth ?? 10) === 1 ? '' : 's'}`);
  }
  if (rules.keep) lines.push(`keep     ${rules.keep.join(', ')}`);
  if (rules.drop) lines.push(`drop     ${rules.drop.join(', ')}`);
  if (rules.rename) lines.push(`rename   ${Object.entries(rules.rename).map(([from, to]) => `${from} → ${to}`).join(', ')}`);
  return lines;
}

/** Settings and rules of a destination, as `update` stored them. */
export function renderDestinationSummary(trackerId: string, d: Destination): string {
  return [`settings ${Object.keys(d.settings).length === 0 ? 'default' : stringifyExactJson(d.settings, redactingReplacer)}`, 'rules', ...ruleLines(d.rules).map((l) => `  ${l}`), `Preview: tributary destinations preview ${trackerId} ${d.id}`].join('\n');
}

/** `destinations show`: the destination, its rules, and what they kept from it. */
export function renderDestination(trackerId: string, d: DestinationView): string {
  const s = d.status;
  const lines = [
    `Destination ${d.id} of tracker ${trackerId}: ${d.type}, ${d.enabled ? (s.paused ? 'paused' : 'enabled') : 'disabled'}`,
    `settings ${Object.keys(d.settings).length === 0 ? 'default' : stringifyExactJson(d.settings, redactingReplacer)}`,
    'rules',
    ...ruleLines(d.rules).map((l) => `  ${l}`),
    `queued ${s.queued}, delivered ${s.delivered}, dead-lettered ${s.deadLettered}`,
  ];
  if (d.rules) lines.push(skippedLine(d));
  if (s.lastFilterError) lines.push(`last filter error: ${s.lastFilterError}`);
  if (d.backfill) lines.push(renderBackfill(d.id, d.backfill));
  return lines.join('\n');
}

/** What a destination's rules kept from it, for `list` and `show`. */
export function skippedLine(d: DestinationView): string {
  const { filter, sample, filterErrors } = d.status.skipped;
  return `skipped by its rules: ${filter} by the filter, ${sample} by the sample, ${filterErrors} where the filter failed`;
}

function oneLine(record: TrackedRecord): string {
  const reserved = [record.kind, record.event, record.uid && `uid ${record.uid}`, record.sid && `sid ${record.sid}`].filter(Boolean).join(' ');
  return `${reserved} ${stringifyExactJson(record.properties)}`;
}

const OUTCOME: Readonly<Record<RulesPreview['records'][number]['outcome'], string>> = { deliver: 'deliver', filter: 'filtered', sample: 'sampled', error: 'error' };

/** `destinations preview`: each record's fate, then the counts. */
export function renderPreview(p: RulesPreview): string {
  const whose = p.destinationId ? `destination ${p.destinationId}'s rules` : p.rules ? 'the rules given' : 'no rules';
  const head = [`Preview of ${whose} over the last ${p.counts.examined} record${p.counts.examined === 1 ? '' : 's'} of tracker ${p.trackerId}:`, ...ruleLines(p.rules ?? undefined).map((l) => `  ${l}`)];
  if (p.records.length === 0) return [...head, '', 'No recent records: send some, then preview again.'].join('\n');
  const rows = p.records.map((r) => [r.record.receivedAt, OUTCOME[r.outcome], r.outcome === 'error' ? `${r.error}: ${oneLine(r.record)}` : oneLine(r.record)]);
  const { delivered, filtered, sampled, errors } = p.counts;
  return [...head, '', table([['RECEIVED', 'OUTCOME', 'RECORD (as delivered; as accepted when skipped)'], ...rows]), '', `${delivered} delivered, ${filtered} filtered out, ${sampled} outside the sample, ${errors} where the filter failed.`].join('\n');
}

/** A backfill in a line: how far it came, what it sent, what its lane still holds. */
export function renderBackfill(destinationId: string, b: BackfillView): string {
  const state = b.state === 'running' ? 'under way' : b.state === 'cancelled' ? `cancelled at ${b.finishedAt}` : `read at ${b.finishedAt}`;
  const lane = b.waiting > 0 ? `; ${b.waiting} still in its lane, delivered while nothing live waits` : '; all delivered';
  return `Backfill of ${destinationId} (${b.resources.join(', ')} received ${b.since} to ${b.until}) ${state}: ${b.read} archived records read, ${b.queued} sent through its rules${b.states > 0 ? `, ${b.states} users and sessions as they are now` : ''}${lane}.`;
}
