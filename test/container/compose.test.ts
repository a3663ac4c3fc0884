import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ENV_VARIABLES, loadConfig } from '../../src/core/config';

/**
 * compose.yaml as an operator runs it: the services docs/operating.md names, each Tributary service on the
 * image with its role, every environment variable one Tributary reads, and the environment each
 * service gets (variables substituted with their defaults, as compose does) accepted by the
 * relay's own configuration. Also .env.example: every name in it is one Tributary reads.
 */
const ROOT = path.join(__dirname, '..', '..');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
  profiles?: string[];
  healthcheck?: { test?: string[]; disable?: boolean };
}

const compose = parse(readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };

/** `${NAME:-default}` and `${NAME-default}` with NAME unset, as compose substitutes them. */
function substitute(value: string, env: Record<string, string> = {}): string {
  return value.replace(/\$\{(\w+)(:?-)([^}]*)\}/g, (_, name: string, op: string, fallback: string) => {
    const set = env[name];
    return set === undefined || (op === ':-' && set === '') ? fallback : set;
  });
}

test('names the services docs/operating.md names: redis, api and worker, and the cluster variant under its profile', () => {
  const { services } = compose;
  expect(Object.keys(services).sort()).toEqual(['api', 'redis', 'redis-1', 'redis-2', 'redis-3', 'redis-cluster-init', 'worker']);
  expect(services.api!.command).toEqual(['api']);
  expect(services.worker!.command).toEqual(['worker']);
  for (const role of ['api', 'worker']) {
    expect(services[role]!.build).toBe('.');
    expect(services[role]!.volumes).toEqual(['tributary-data:/data']);
    expect(services[role]!.depends_on).toEqual({ redis: { condition: 'service_healthy' } });
  }
  expect(services.api!.ports).toEqual(['${TRIBUTARY_PORT:-8080}:8080']);
  expect(services.redis!.command).toEqual(expect.arrayContaining(['--appendonly', 'yes', '--maxmemory-policy', 'noeviction']));
  for (const node of ['redis-1', 'redis-2', 'redis-3', 'redis-cluster-init']) expect(services[node]!.profiles).toEqual(['cluster']);
  expect(services['redis-1']!.command).toEqual(expect.arrayContaining(['--cluster-enabled', 'yes']));
  expect(Object.keys(compose.volumes).sort()).toEqual(['redis-1-data', 'redis-2-data', 'redis-3-data', 'redis-data', 'tributary-data']);
});

test('every environment variable is one Tributary reads, and the environment each role gets is accepted', () => {
  for (const role of ['api', 'worker']) {
    const env = compose.services[role]!.environment!;
    expect(Object.keys(env).filter((name) => !ENV_VARIABLES.includes(name))).toEqual([]);
    const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, substitute(String(v))]));
    const config = loadConfig(resolved);
    expect(config.redisUrl).toBe('redis://redis:6379');
    expect(config.dataDir).toBe('/data');
  }
  expect(compose.services.api!.environment!.PORT).toBe('8080');
  // The cluster variant as its comment says to start it.
  const clusterEnv = { REDIS_URL: '', REDIS_CLUSTER_NODES: 'redis-1:6379,redis-2:6379,redis-3:6379', REDIS_SHARDS: '12' };
  const resolved = Object.fromEntries(Object.entries(compose.services.worker!.environment!).map(([k, v]) => [k, substitute(String(v), clusterEnv)]));
  const cluster = loadConfig(resolved);
  expect(cluster.redisUrl).toBeUndefined();
  expect(cluster.redisCluster?.nodes.map((n) => `${n.host}:${n.port}`)).toEqual(['redis-1:6379', 'redis-2:6379', 'redis-3:6379']);
});

/** Read by the libraries Tributary uses, not by its own configuration (docs/operating.md, "Processes": outbound proxy; docs/configuration.md). */
const LIBRARY_VARIABLES = ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'GOOGLE_APPLICATION_CREDENTIALS'];

test('.env.example names only variables Tributary or its libraries read', () => {
  const names = readFileSync(path.join(ROOT, '.env.example'), 'utf8')
    .split('\n')
    .map((line) => /^#?\s*([A-Z][A-Z0-9_]*)=/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
  expect(names.length).toBeGreaterThan(20);
  expect(names.filter((name) => !ENV_VARIABLES.includes(name) && !LIBRARY_VARIABLES.includes(name))).toEqual([]);
});
