import { json } from '../../src/cli/render';
import { InvalidArgumentError } from 'commander';
import { collectSetting, mergeSettings, parseSetting, parseSettingsJson } from '../../src/cli/settings-args';

test('values are JSON when they parse, text otherwise', () => {
  const cases: Array<[string, unknown]> = [
    ['on=true', true],
    ['off=false', false],
    ['n=42', 42],
    ['x=-1.5', -1.5],
    ['obj={"a":[1,2]}', { a: [1, 2] }],
    ['list=[1,"b"]', [1, 'b']],
    ['quoted="123"', '123'],
    ['path=warehouse/shop.duckdb', 'warehouse/shop.duckdb'],
    ['empty=', ''],
    ['zip=007', '007'],
    ['eq=a=b', 'a=b'],
    ['big=12345678901234567890', '12345678901234567890'],
    ['nothing=null', null],
  ];
  for (const [arg, value] of cases) expect(parseSetting(arg)[1]).toEqual(value);
});

test('a setting without a key or an = is refused', () => {
  for (const arg of ['novalue', '=1', ' =1']) expect(() => parseSetting(arg)).toThrow(InvalidArgumentError);
});

test('collects repeated settings; --setting overrides --settings-json; a key twice is refused', () => {
  const pairs = collectSetting('b=2', collectSetting('a=1', undefined));
  expect(mergeSettings(parseSettingsJson('{"a":0,"c":3}'), pairs)).toEqual({ a: 1, b: 2, c: 3 });
  expect(mergeSettings(undefined, undefined)).toEqual({});
  expect(() => mergeSettings(undefined, collectSetting('a=2', pairs))).toThrow('--setting a is given twice.');
});

test('__proto__ stays an ordinary key for the schema to judge', () => {
  const merged = mergeSettings(parseSettingsJson('{"__proto__":{"polluted":true}}'), [['__proto__', 1]]);
  expect(Object.keys(merged)).toEqual(['__proto__']);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

test('--settings-json must be a JSON object', () => {
  expect(() => parseSettingsJson('[1]')).toThrow('expected a JSON object');
  expect(() => parseSettingsJson('null')).toThrow('expected a JSON object');
  expect(() => parseSettingsJson('{oops')).toThrow('not JSON');
});

test('JSON output redacts inline credentials', () => {
  const out = json({ settings: { spreadsheetId: 'x', credentials: { private_key: 'KEY', client_email: 'a@b' } } });
  expect(out).not.toContain('KEY');
  expect(out).toContain('"credentials": "[redacted]"');
  expect(out).toContain('"spreadsheetId": "x"');
});
