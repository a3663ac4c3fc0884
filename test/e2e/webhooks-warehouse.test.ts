import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import examples from '@octokit/webhooks-examples';
import { localConnector, queryWarehouse } from '../../connectors/local';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { SourceService } from '../../src/operator/source-service';
import { startTestApi, type TestApi } from '../helpers/api';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

/** Every recorded GitHub example, signed, through the queue into the local warehouse: stored whole, once each. */
jest.setTimeout(120_000);
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-webhooks-'));
const secret = 'warehouse-webhook-secret';
let api: TestApi;
let worker: WorkerRuntime;

beforeAll(async () => {
  api = await startTestApi({ DATA_DIR: dataDir }, { destinations: [{ id: 'wh', type: 'local', enabled: true, settings: {} }] });
  await new SourceService(api.runtime.store).add(api.tracker.id, { type: 'github', secret });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([localConnector as Connector]), createLogger('silent'), { discoverIntervalMs: 50, delivery: { backoff: { baseMs: 50, maxMs: 200 }, maxRecordAttempts: 10, configRecheckMs: 200, pollMs: 100, writeTimeoutMs: 30_000 } });
});
afterAll(async () => {
  await worker.close();
  await api.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('GitHub examples land in the warehouse with their _event and delivery id, every field kept, redeliveries once', async () => {
  const sent = new Map<string, { event: string; payload: unknown }>();
  for (const { name, examples: payloads } of examples as Array<{ name: string; examples: Array<Record<string, unknown>> }>) {
    for (const payload of payloads) {
      const raw = JSON.stringify(payload);
      const delivery = randomUUID();
      const headers = { 'Content-Type': 'application/json', 'X-GitHub-Event': name, 'X-GitHub-Delivery': delivery, 'X-Hub-Signature-256': `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}` };
      // Sent twice, as GitHub's "Redeliver" does.
      for (let i = 0; i < 2; i++) expect((await api.http.post(`/v3/webhooks/${api.tracker.id}/github`).set(headers).send(raw)).status).toBe(200);
      sent.set(delivery, { event: `github.${name}${typeof payload.action === 'string' ? `.${payload.action}` : ''}`, payload });
    }
  }
  const file = path.join(dataDir, 'warehouse', `${api.tracker.id}.duckdb`);
  const rows = await waitFor(
    async () => {
      try {
        const r = await queryWarehouse(file, 'select _id, _event, _properties::VARCHAR from events');
        return r.rows.length >= sent.size ? r.rows : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 90_000, intervalMs: 250, message: `${sent.size} events in the warehouse` },
  );
  expect(rows).toHaveLength(sent.size);
  for (const [id, event, properties] of rows as Array<[string, string, string]>) {
    const s = sent.get(id)!;
    expect(event).toBe(s.event);
    expect(JSON.parse(properties)).toEqual(s.payload);
  }
});
