import { createDefaultRegistry } from '../../connectors';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';

function fakeConnector(type: string): Connector {
  return { type, description: type, settingsSchema: undefined as never, batch: { maxRecords: 1, maxAgeMs: 1 }, open: () => Promise.reject(new Error('not here')) };
}

test('the default registry names every type without loading, and each loads the connector of its name', () => {
  const registry = createDefaultRegistry();
  expect(registry.types()).toEqual(['bigquery', 'google-sheets', 'local', 'postgres']);
  for (const type of registry.types()) expect(registry.get(type)?.type).toBe(type);
  expect(registry.get('nope')).toBeUndefined();
});

test('a lazy connector is loaded once, on first use', () => {
  const load = jest.fn(() => fakeConnector('memory'));
  const registry = new ConnectorRegistry([fakeConnector('local'), { type: 'memory', load }]);
  expect(registry.types()).toEqual(['local', 'memory']);
  expect(load).not.toHaveBeenCalled();
  const first = registry.get('memory');
  expect(registry.get('memory')).toBe(first);
  expect(load).toHaveBeenCalledTimes(1);
});

test('a lazy connector that loads under another type is refused', () => {
  const registry = new ConnectorRegistry([{ type: 'memory', load: () => fakeConnector('local') }]);
  expect(() => registry.get('memory')).toThrow('the connector registered as "memory" serves "local"');
});

test('loadAll loads every lazy connector', () => {
  const load = jest.fn(() => fakeConnector('memory'));
  new ConnectorRegistry([{ type: 'memory', load }]).loadAll();
  expect(load).toHaveBeenCalledTimes(1);
});
