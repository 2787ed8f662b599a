/** Jest 30 in ESM mode: ts-jest compiles TypeScript as ES modules, `.js` suffixes map back to sources. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  setupFiles: ['<rootDir>/test/setup.ts'],
  // One worker per core is the right fit for a 2-core CI machine.
  maxWorkers: '100%',
  // A guard against hangs, not a measure: booting an app and a database on a loaded 2-core machine can take
  // seconds, and a test that fails for want of CPU says nothing. Conditions carry their own deadlines.
  testTimeout: 30_000,
};
