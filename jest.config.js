/**
 * Tests run TypeScript through SWC (@swc/jest), which strips types file by file (the project sets
 * `isolatedModules`, so this is safe); `npm run typecheck` does the type checking once.
 * Packages published as ES modules only (the CEL evaluator of destination rules) are turned into
 * CommonJS for Jest, whose module system cannot require() an ES module as Node 20.19+ does.
 */
const ESM_ONLY = ['@marcbachmann/cel-js'];

/** SWC's options: the syntax of the files, and the output Node 20 runs under Jest's CommonJS. */
const swc = (syntax) => ['@swc/jest', { jsc: { parser: { syntax }, target: 'es2022' }, module: { type: 'commonjs' }, sourceMaps: 'inline' }];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': swc('typescript'),
    '^.+\\.js$': swc('ecmascript'),
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  testTimeout: 30000,
  // The relay's and the CLI's bundles, which tests run as processes (test/helpers/entries.ts).
  globalSetup: '<rootDir>/test/global-setup.ts',
};
