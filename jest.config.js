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
};
