import { googleSheetsConnector } from './google-sheets';
import { bigqueryConnector } from './bigquery';
import { localConnector } from './local';
import { ConnectorRegistry } from './registry';
import type { Connector } from './types';

/** Every connector Tributary ships, by destination type. */
export function createDefaultRegistry(): ConnectorRegistry {
  const connectors: Connector[] = [localConnector as Connector, googleSheetsConnector as Connector, bigqueryConnector as Connector];
  return new ConnectorRegistry(connectors);
}
