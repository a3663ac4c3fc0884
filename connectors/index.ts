import { ConnectorRegistry } from './registry';
import type { Connector } from './types';

// `require` rather than `import`: a connector's module is loaded when the registry first hands it
// out (see LazyConnector), so that the CLI's commands that write nowhere start without DuckDB,
// googleapis and the BigQuery client. Synchronous, so `ConnectorRegistry.get` stays synchronous.

/** Every connector Tributary ships, by destination type. */
export function createDefaultRegistry(): ConnectorRegistry {
  return new ConnectorRegistry([
    { type: 'local', load: () => (require('./local') as typeof import('./local')).localConnector as Connector },
    { type: 'google-sheets', load: () => (require('./google-sheets') as typeof import('./google-sheets')).googleSheetsConnector as Connector },
    { type: 'bigquery', load: () => (require('./bigquery') as typeof import('./bigquery')).bigqueryConnector as Connector },
    { type: 'postgres', load: () => (require('./postgres') as typeof import('./postgres')).postgresConnector as Connector },
  ]);
}
