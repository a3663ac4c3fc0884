import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/wait';

/**
 * The container image, built from the Dockerfile on the local stand-in for its base
 * (scripts/container/local-base.sh) and run as an operator would: it starts, answers /readyz,
 * accepts an event, delivers it to the local warehouse (embedded Redis, DATA_DIR on a volume), and
 * stops cleanly on SIGTERM. Run by `npm run test:image` (which .ci/run calls after `npm test`):
 * building an image takes minutes and needs root with podman, so `npm test` skips it.
 */
const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..');
const IMAGE = 'localhost/tributary:test';
const ADMIN_TOKEN = 'image-test-admin-token-0123456789abcdef';
const enabled = process.env.TRIBUTARY_IMAGE_TEST === '1';
/** What this sandbox's podman needs (docs/operating.md, "Container image"); harmless elsewhere. */
const RUN_FLAGS = ['--runtime', 'runc'];
const LIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];

(enabled ? describe : describe.skip)('the container image', () => {
  jest.setTimeout(900_000);
  const name = `tributary-image-test-${process.pid}`;
  const volume = `${name}-data`;
  let port = 0;

  const podman = (args: string[], timeout = 600_000) => run('podman', args, { cwd: ROOT, timeout, maxBuffer: 64 * 1024 * 1024 });
  const admin = (url: string, init: RequestInit = {}) => fetch(`http://127.0.0.1:${port}/admin/api${url}`, { ...init, headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' } });

  beforeAll(async () => {
    await run('bash', [path.join(ROOT, 'scripts/container/local-base.sh')], { timeout: 600_000 });
    // Docker's image format: the OCI one has no HEALTHCHECK, and podman would drop it.
    await podman(['build', '--format', 'docker', '--isolation=chroot', '-t', IMAGE, '.'], 900_000);
    port = await freePort();
  });

  afterAll(async () => {
    await podman([...RUN_FLAGS, 'rm', '-f', name]).catch(() => undefined);
    await podman(['volume', 'rm', '-f', volume]).catch(() => undefined);
  });

  test('is a slim image whose user is not root, with tini as PID 1 and a health check on /readyz', async () => {
    const { stdout } = await podman(['image', 'inspect', IMAGE, '--format', '{{.Size}} {{.Config.User}} {{json .Config.Entrypoint}} {{json .Config.Healthcheck.Test}} {{json .Config.Volumes}}']);
    const [size, user, entrypoint, health, volumes] = stdout.trim().split(' ');
    console.log(`image ${IMAGE}: ${(Number(size) / 1024 / 1024).toFixed(0)} MiB`);
    expect(user).toBe('node');
    expect(JSON.parse(entrypoint!)).toEqual(['tini', '--', 'node', '--max-semi-space-size=32', '--heap-growing-percent=100', 'dist/src/boot/server.js']);
    expect(health).toContain('/readyz');
    expect(JSON.parse(volumes!)).toEqual({ '/data': {} });
  });

  test('starts, accepts an event, delivers it to the local warehouse, and stops cleanly on SIGTERM', async () => {
    await podman([
      ...RUN_FLAGS,
      'run', '-d', '--name', name, ...LIMITS,
      '--network', 'host',
      '-v', `${volume}:/data`,
      '-e', `PORT=${port}`, '-e', 'HOST=127.0.0.1', '-e', `PUBLIC_URL=http://127.0.0.1:${port}`, '-e', `ADMIN_TOKEN=${ADMIN_TOKEN}`,
      IMAGE,
    ]);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200, { timeoutMs: 60_000, intervalMs: 250, message: '/readyz answers 200' });

    // The first start made the demo tracker, delivering to the local warehouse.
    const view = (await (await admin('/trackers/demo/integration')).json()) as { token: string };
    const sent = await fetch(`http://127.0.0.1:${port}/v3/event`, { method: 'POST', headers: { Authorization: `Tracker ${view.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ _event: 'image_smoke', n: 1 }) });
    expect(sent.status).toBe(202);
    await waitFor(
      async () => {
        const res = await admin('/trackers/demo/query', { method: 'POST', body: JSON.stringify({ sql: "select count(*)::int from events where _event = 'image_smoke'" }) });
        return res.status === 200 && ((await res.json()) as { rows: number[][] }).rows[0]?.[0] === 1;
      },
      { timeoutMs: 60_000, intervalMs: 500, message: 'the event in the warehouse' },
    );

    const stopping = Date.now();
    await podman([...RUN_FLAGS, 'kill', '--signal', 'TERM', name]);
    const { stdout: exit } = await podman([...RUN_FLAGS, 'wait', name], 60_000);
    const took = Date.now() - stopping;
    expect(exit.trim()).toBe('0');
    expect(took).toBeLessThan(30_000);
    const { stdout: logs, stderr } = await podman([...RUN_FLAGS, 'logs', name]);
    expect(`${logs}${stderr}`).toMatch(/shutting down: no new requests/);
    expect(`${logs}${stderr}`).toMatch(/"msg":"stopped"/);
  });
});
