/**
 * Tests run TypeScript through ts-jest in transpile-only mode; `npm run typecheck` does the type checking once.
 * Packages published as ES modules only (the CEL evaluator of destination rules) are turned into
 * CommonJS for Jest, whose module system cannot require() an ES module as Node 20.19+ does.
 */
const ESM_ONLY = ['@marcbachmann/cel-js'];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
    '^.+\\.js$': ['ts-jest', { diagnostics: false, tsconfig: { allowJs: true, module: 'commonjs', moduleResolution: 'node10' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  testTimeout: 30000,
  // The relay's and the CLI's bundles, which tests run as processes (test/helpers/entries.ts).
  globalSetup: '<rootDir>/test/global-setup.ts',
};
