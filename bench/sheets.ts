import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createGoogleSheetsConnector, type SheetsWriter } from '../connectors/google-sheets';
import { BATCH_LIMITS } from '../connectors/google-sheets/config';
import { createLogger } from '../src/core/logger';
import type { Properties, TrackedRecord } from '../src/core/records/types';
import { SheetsFake } from '../test/fakes/sheets';
import { fmt } from './format';

/**
 * `npm run bench:sheets [-- --events 100000]`
 *
 * N events through the google-sheets connector into the local Sheets fake, which enforces Google's
 * quotas (60 write requests a minute per credential), twice: in batches of the connector's
 * maxRecords (what the delivery loop hands over once a backlog has built up: throughput), and in
 * the batches it hands over at 1 000 events/s (a batch every maxAgeMs: write requests a minute).
 * Every row is checked to be there once. The baseline, in the same run: the same rows sent to the
 * fake in one raw values.append, the fake's own ceiling. Past ~60 batches a minute the connector's
 * budget makes it wait, so runs above ~300 000 events measure the quota, not the code.
 */
const { values: args } = parseArgs({ options: { events: { type: 'string' } } });
const N = Number(args.events ?? process.env.BENCH_SHEETS_EVENTS ?? 100_000);
if (!Number.isInteger(N) || N <= 0) throw new Error(`--events must be a positive integer, got ${args.events}`);

const PAGES = ['/', '/pricing', '/docs/getting-started', '/blog/2026/release-notes', '/cart', '/search'];
const NAMES = ['page_view', 'signup', 'add_to_cart', 'purchase', 'search'];

/** ~300-byte analytics events, deterministic. */
function makeEvents(count: number): TrackedRecord[] {
  const now = new Date().toISOString();
  return Array.from({ length: count }, (_, i) => ({
    kind: 'event',
    id: randomUUID(),
    receivedAt: now,
    eventAt: now,
    event: NAMES[i % NAMES.length]!,
    uid: `user-${(i * 7919) % 100_000}`,
    sid: `sess-${(i * 104_729) % 1_000_000}`,
    properties: Object.assign(Object.create(null) as Properties, {
      page: PAGES[i % PAGES.length]!,
      title: 'Tributary — relay your tracking data to Sheets and BigQuery',
      browser: ['Chrome 131', 'Firefox 133', 'Safari 18.1'][i % 3]!,
      country: ['FR', 'DE', 'US', 'JP'][i % 4]!,
      screen_width: [375, 1280, 1920][i % 3]!,
      amount: (i % 50_000) / 100,
    }),
  }));
}

async function connectorRun(fake: SheetsFake, records: TrackedRecord[], batchSize: number): Promise<{ seconds: number; writes: number; peakWrites: number }> {
  const spreadsheetId = fake.createSpreadsheet('bench', ['Sheet1']).id;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-sheets-'));
  const connector = createGoogleSheetsConnector();
  const settings = connector.settingsSchema.parse({ spreadsheetId, endpoint: fake.url, rollover: 'none' });
  const writer = (await connector.open({ trackerId: 'bench', destinationId: 'sheets', settings, dataDir, logger: createLogger('silent'), now: () => new Date() })) as SheetsWriter;
  const signal = new AbortController().signal;
  const before = fake.requests.length;
  const start = process.hrtime.bigint();
  for (let i = 0; i < records.length; i += batchSize) await writer.write(records.slice(i, i + batchSize), signal);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await writer.close();
  rmSync(dataDir, { recursive: true, force: true });
  const ids = fake.values(spreadsheetId, 'events').slice(1).map((r) => r[0]);
  if (ids.length !== records.length || new Set(ids).size !== records.length) throw new Error(`expected ${records.length} distinct rows, found ${ids.length} (${new Set(ids).size} distinct)`);
  const writes = fake.requests.slice(before).filter((r) => !['spreadsheets.get', 'values.get', 'values.batchGet'].includes(r.method)).length;
  return { seconds, writes, peakWrites: fake.quota.peak('anonymous', 'write') };
}

async function baselineRun(fake: SheetsFake, records: TrackedRecord[]): Promise<number> {
  const spreadsheetId = fake.createSpreadsheet('baseline', ['events']).id;
  const rows = records.map((r) => [r.id, r.uid ?? null, r.sid ?? null, r.event ?? null, r.eventAt ?? null, r.receivedAt, ...Object.values(r.properties)]);
  const start = process.hrtime.bigint();
  const res = await fetch(new URL(`v4/spreadsheets/${spreadsheetId}/values/${encodeURIComponent("'events'!A:L")}:append?valueInputOption=RAW&insertDataOption=INSERT_ROWS`, fake.url), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer baseline' },
    body: JSON.stringify({ majorDimension: 'ROWS', values: rows }),
  });
  if (!res.ok) throw new Error(`baseline append failed: ${res.status} ${await res.text()}`);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** What the delivery loop hands over at 1 000 events/s: a batch every maxAgeMs (2 s), 2 000 events. */
const STEADY_BATCH = Math.min(BATCH_LIMITS.maxRecords, (1000 * BATCH_LIMITS.maxAgeMs) / 1000);

async function main(): Promise<void> {
  // One fake per run: each has its own quota and the connector its own budget.
  const fakes = await Promise.all([SheetsFake.start(), SheetsFake.start(), SheetsFake.start()]);
  try {
    const records = makeEvents(N);
    const backlog = await connectorRun(fakes[0]!, records, BATCH_LIMITS.maxRecords);
    const steady = await connectorRun(fakes[1]!, records, STEADY_BATCH);
    const baselineSeconds = await baselineRun(fakes[2]!, records);
    const rate = N / backlog.seconds;
    const baseline = N / baselineSeconds;
    const perThousand = (w: number) => (w / N) * 1000;
    const steadyPerMinute = perThousand(steady.writes) * 60;
    console.log(`google-sheets connector → Sheets fake (Google's quotas enforced), ${fmt(N)} events`);
    console.log(`  connector, backlog (batches of ${fmt(BATCH_LIMITS.maxRecords)}):  ${fmt(rate)} rows/s, ${fmt(backlog.seconds, 2)} s, ${backlog.writes} write requests = ${fmt(perThousand(backlog.writes), 2)} per 1 000 rows, peak ${backlog.peakWrites} in one minute`);
    console.log(`  connector, 1 000 events/s (batches of ${fmt(STEADY_BATCH)} every ${BATCH_LIMITS.maxAgeMs / 1000} s):  ${fmt(perThousand(steady.writes), 2)} write requests per 1 000 rows = ${fmt(steadyPerMinute, 1)} per minute`);
    console.log(`  baseline, one raw values.append of all rows:  ${fmt(baseline)} rows/s (${fmt(baselineSeconds, 2)} s)`);
    console.log(`  ratio connector / baseline:  ${fmt(rate / baseline, 2)}`);
    const ok = rate >= 1000 && backlog.peakWrites <= 60 && steadyPerMinute < 60;
    console.log(`  target ≥ 1 000 events/s under 60 write requests/min: ${ok ? 'met' : 'NOT met'}`);
    if (!ok) process.exitCode = 1;
  } finally {
    await Promise.all(fakes.map((f) => f.close()));
  }
}

void main();
