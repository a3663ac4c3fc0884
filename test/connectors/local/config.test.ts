import path from 'node:path';
import { LocalSettingsSchema, warehouseFile } from '../../../connectors/local';

describe('local settings', () => {
  it('defaults to warehouse/<trackerId>.duckdb under the data directory', () => {
    const settings = LocalSettingsSchema.parse({});
    expect(warehouseFile('/data', 'shop', settings)).toBe(path.resolve('/data/warehouse/shop.duckdb'));
    expect(warehouseFile('/data', 'shop', LocalSettingsSchema.parse({ path: 'dw/main.duckdb' }))).toBe(path.resolve('/data/dw/main.duckdb'));
  });

  it.each([
    [{ path: '/etc/x.duckdb' }, 'path must be relative'],
    [{ path: '../x.duckdb' }, 'stay inside'],
    [{ path: 'a/../../x.duckdb' }, 'stay inside'],
    [{ path: '' }, 'path'],
    [{ maxColumns: -1 }, 'maxColumns'],
    [{ pth: 'x' }, 'pth'],
  ])('rejects %p, naming the setting', (input, expected) => {
    const result = LocalSettingsSchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error!.issues)).toContain(expected);
  });
});
