import { googleSheetsConnector } from './google-sheets';
import { localConnector } from './local';
import { ConnectorRegistry } from './registry';
import type { Connector } from './types';

/** Every connector Tributary ships, by destination type. */
export function createDefaultRegistry(): ConnectorRegistry {
  const connectors: Connector[] = [localConnector as Connector, googleSheetsConnector as Connector];
  return new ConnectorRegistry(connectors);
}
