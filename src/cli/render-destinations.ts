import type { SetupGuide } from '../../connectors/types';
import type { TestResult } from '../operator/destination-service';
import type { Destination } from '../core/trackers/types';
import type { DestinationView } from '../operator/delivery-admin';
import type { ArchiveStatus } from '../../jobs/history/archive-status';
import { json, table } from './render';
import { renderBackfill, ruleLines, skippedLine } from './render-rules';

/** `850ms`, `12s`, `3m 4s`, `2h 5m`, `3d 1h`: precise when small, short when large. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const [m, h, d] = [Math.floor(s / 60), Math.floor(s / 3600), Math.floor(s / 86_400)];
  if (m < 60) return `${m}m ${s % 60}s`;
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${d}d ${h % 24}h`;
}

function state(d: DestinationView): string {
  if (!d.enabled) return 'disabled';
  return d.status.paused ? 'paused' : 'enabled';
}

function lastError(d: DestinationView): string {
  const e = d.status.lastError;
  return e ? `${e.at} ${e.kind}: ${e.message}` : '-';
}

function backlogLine(trackerId: string, backlog: number): string {
  return `${backlog} record${backlog === 1 ? '' : 's'} accepted while tracker ${trackerId} had no destination wait in its backlog; the next destination added receives them.`;
}

export function renderDestinationList(trackerId: string, list: DestinationView[], backlog = 0): string {
  if (list.length === 0) {
    const hint = `Tracker ${trackerId} has no destinations. Add one: tributary destinations add ${trackerId} --type local`;
    return backlog > 0 ? `${hint}
${backlogLine(trackerId, backlog)}` : hint;
  }
  const rows = list.map((d) => [
    d.id,
    d.type,
    state(d),
    String(d.status.queued),
    String(d.status.delivered),
    String(d.status.deadLettered),
    d.status.queued > 0 ? duration(d.status.lagMs) : '-',
    d.status.lastDeliveredAt ?? '-',
    lastError(d),
  ]);
  const out = [table([['ID', 'TYPE', 'STATE', 'QUEUED', 'DELIVERED', 'DEAD-LETTERED', 'LAG', 'LAST DELIVERED', 'LAST ERROR'], ...rows])];
  // A pause outlives its error line only in spirit: say what delivery waits for, and how to resume.
  for (const d of list.filter((v) => v.enabled && v.status.paused)) {
    out.push(`\n${d.id} is paused until its settings or access are fixed: ${d.status.paused}\n  check: tributary destinations test ${trackerId} ${d.id}`);
  }
  for (const d of list.filter((v) => v.status.attempts > 0)) {
    const since = d.status.writingSince ? ` since ${d.status.writingSince}` : '';
    const next = d.status.retryAt ? `; next attempt at ${d.status.retryAt}` : '';
    out.push(`\n${d.id} is retrying a batch of ${d.status.inFlight} record${d.status.inFlight === 1 ? '' : 's'}${since}: ${d.status.attempts} failed attempt${d.status.attempts === 1 ? '' : 's'}${next}`);
  }
  for (const d of list.filter((v) => v.status.fullInSeconds.redisCap !== null || v.status.fullInSeconds.disk !== null)) {
    const { redisCap, disk } = d.status.fullInSeconds;
    const when = [redisCap === null ? undefined : redisCap === 0 ? 'past its Redis cap (spilling to disk)' : `reaches its Redis cap in ${duration(redisCap * 1000)}`, disk === null ? undefined : `fills the disk in ${duration(disk * 1000)}`].filter(Boolean).join(', ');
    out.push(`\n${d.id}: backlog growing by ${d.status.growthPerSecond.toFixed(1)} records/s; at this rate it ${when}.`);
  }
  for (const d of list.filter((v) => v.status.spooled > 0)) {
    out.push(`\n${d.id}: ${d.status.spooled} of its ${d.status.queued} queued records are in the disk spool of the worker that holds it (${(d.status.spoolBytes / 1048576).toFixed(1)} MiB); they are delivered first, in order.`);
  }
  // Moved by the router with the tracker's next record; until then the count stays visible.
  if (backlog > 0) out.push(`\n${backlogLine(trackerId, backlog)}`);
  for (const d of list.filter((v) => v.rules)) {
    out.push(`\n${d.id} rules: ${ruleLines(d.rules).join('; ')}\n  ${skippedLine(d)}${d.status.lastFilterError ? `\n  last filter error: ${d.status.lastFilterError}` : ''}`);
  }
  for (const d of list.filter((v) => v.backfill && (v.backfill.state === 'running' || v.backfill.waiting > 0))) {
    out.push(`\n${renderBackfill(d.id, d.backfill!)}`);
  }
  for (const d of list.filter((v) => v.status.details)) {
    out.push(`\n${d.id}: ${Object.entries(d.status.details!).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
  return out.join('\n');
}

/**
 * `guide`: the destination type's first setup. When no key was given, its steps are printed: the
 * destination then uses the host's Application Default Credentials, which a first-time user has not.
 */
export function renderAdded(trackerId: string, d: Destination, guide?: SetupGuide): string {
  const settings = Object.keys(d.settings).length === 0 ? 'default settings' : `settings ${json(d.settings).replace(/\s*\n\s*/g, ' ')}`;
  const lines = [`Added destination ${d.id} (${d.type}, ${settings}) to tracker ${trackerId}${d.enabled ? '' : ', disabled'}.`];
  lines.push(d.enabled ? 'Records accepted from now on are delivered to it.' : `Records are not sent to it until: tributary destinations enable ${trackerId} ${d.id}`);
  if (guide?.keySetting && d.settings[guide.keySetting] === undefined && d.settings.keyFile === undefined && d.settings.endpoint === undefined) {
    lines.push('', 'No service-account key given: it will use the Application Default Credentials of the host that delivers it, if it has any. To give it a key:');
    guide.steps.forEach((step, i) => lines.push(`  ${i + 1}. ${step.text}${step.url ? `\n     ${step.url}` : ''}`));
    lines.push(`  ${guide.steps.length + 1}. tributary destinations update ${trackerId} ${d.id} --setting keyFile=/path/to/the-key.json`);
    if (guide.afterKey) lines.push(`  ${guide.steps.length + 2}. ${guide.afterKey.replace('{email}', "the key's client_email")}`);
    lines.push('');
  }
  lines.push(`Check it: tributary destinations test ${trackerId} ${d.id}`);
  return lines.join('\n');
}

export function renderTestResult(trackerId: string, destinationId: string, result: TestResult): string {
  if (result.ok) return [`OK: destination ${destinationId} of tracker ${trackerId} works.`, ...(result.notes ?? []).map((n) => `  ${n}`)].join('\n');
  const { kind, message } = result.error ?? { kind: 'error', message: 'no detail' };
  return `NOT OK: destination ${destinationId} of tracker ${trackerId}: ${message} (${kind} error)`;
}

/** MiB with one decimal, GiB past 1 024 MiB. */
function size(bytes: number): string {
  const mib = bytes / 1048576;
  return mib >= 1024 ? `${(mib / 1024).toFixed(1)} GiB` : `${mib.toFixed(1)} MiB`;
}

/** The tracker's archive in one line or two: what backfills and replays read. */
export function renderArchive(trackerId: string, a: ArchiveStatus): string {
  if (a.days === 0) return `Archive: off for tracker ${trackerId} (trackers update ${trackerId} --archive-days 30 keeps the accepted records for backfills).`;
  if (a.records === 0 && a.bytes === 0 && a.waiting === 0) return `Archive: empty so far; it keeps ${a.days} days of accepted records for backfills.`;
  const since = a.oldestDay ? ` since ${a.oldestDay}` : '';
  const lines = [`Archive: ${size(a.bytes)} on disk${since}, kept ${a.days} days; ${a.records} records archived in all${a.waiting > 0 ? `, ${a.waiting} routing steps on their way` : ''}.`];
  if (a.missingThrough) lines.push(`  History up to ${a.missingThrough} was archived on another worker host: give every worker the same ARCHIVE_DIR.`);
  if (a.lastError) lines.push(`  Last error: ${a.lastError}`);
  if (a.lastGap) lines.push(`  Gap: ${a.lastGap}`);
  return lines.join('\n');
}
