import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { googleSheetsConnector } from '../../connectors/google-sheets';
import { localConnector } from '../../connectors/local';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { generateAdminToken } from '../../src/admin/admin-token';
import { startTestApi, type TestApi } from './api';
import { createMemoryConnector } from './memory-connector';

export interface AdminTestApi extends TestApi {
  adminToken: string;
  /** `Authorization` header value that passes. */
  bearer: string;
  dataDir: string;
}

/**
 * startTestApi with the admin API on, a temporary DATA_DIR, and the local, google-sheets and
 * memory connectors (the memory one answers `test` without any I/O). `env`: more settings.
 */
export async function startAdminApi(env: Record<string, string> = {}): Promise<AdminTestApi> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'tributary-admin-'));
  const adminToken = generateAdminToken();
  const registry = new ConnectorRegistry([localConnector as Connector, googleSheetsConnector as Connector, createMemoryConnector() as Connector]);
  const api = await startTestApi({ DATA_DIR: dataDir, PUBLIC_URL: 'https://track.example', ...env }, {}, undefined, { token: adminToken, registry });
  return {
    ...api,
    adminToken,
    bearer: `Bearer ${adminToken}`,
    dataDir,
    close: async () => {
      await api.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Requests to `/admin/api…` carrying the admin token. */
export function adminClient(api: AdminTestApi) {
  return clientFor(() => api);
}

export type AdminClient = ReturnType<typeof adminClient>;

function clientFor(api: () => AdminTestApi) {
  const at = (url: string) => `/admin/api${url}`;
  return {
    get: (url: string) => api().http.get(at(url)).set('Authorization', api().bearer),
    post: (url: string, body?: object) => {
      const req = api().http.post(at(url)).set('Authorization', api().bearer);
      return body === undefined ? req : req.send(body);
    },
    patch: (url: string, body: object) => api().http.patch(at(url)).set('Authorization', api().bearer).send(body),
    del: (url: string) => api().http.delete(at(url)).set('Authorization', api().bearer),
  };
}

/** The admin API of a test file, and requests to it; `api` can be read once `beforeAll` has run. */
export interface AdminApiHandle extends AdminClient {
  readonly api: AdminTestApi;
}

/** One {@link startAdminApi} for the test file: started in `beforeAll`, closed in `afterAll`. */
export function useAdminApi(env: Record<string, string> = {}): AdminApiHandle {
  let api: AdminTestApi | undefined;
  beforeAll(async () => {
    api = await startAdminApi(env);
  });
  afterAll(async () => api?.close());
  const current = () => {
    if (!api) throw new Error('the admin API is started in beforeAll');
    return api;
  };
  return {
    ...clientFor(current),
    get api() {
      return current();
    },
  };
}
