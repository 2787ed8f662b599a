// ESLint flat config: typescript-eslint's recommended rules, plus the room boundaries of DESIGN §2.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'data/**', 'test-artifacts/**', 'examples/*/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', performance: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', NodeJS: 'readonly', global: 'readonly', fetch: 'readonly', setImmediate: 'readonly', Buffer: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'error',
    },
  },
  {
    // Type-aware rules for every TypeScript file (src, test, plugins, examples: all in tsconfig.json): a
    // promise nobody awaits or handles loses its failure, and a test that forgets an `await` passes without
    // checking anything (issue 15 item 7). A deliberate fire-and-forget is written `void promise`, with the
    // reason beside it where it is not obvious. bench/ and scripts/ are plain JavaScript: not type-checked.
    // The console (console/, browser code) is checked the same way, through its own console/tsconfig.json.
    files: ['**/*.ts', 'console/**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    // A spec never sleeps in place of a condition: a fixed wait is flaky on a loaded machine and slow on an
    // idle one. Conditions are awaited with `eventually` / `until`, and time that passes on purpose (a slow
    // fake, a person's pace) is `pause(ms, why)`: all three in test/support/eventually.ts.
    files: ['test/**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Promise'] > ArrowFunctionExpression > CallExpression.body[callee.name='setTimeout']",
          message: 'No bare setTimeout waits in specs: use eventually/until for a condition or pause(ms, why) from test/support/eventually.ts.',
        },
      ],
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'node:timers/promises', importNames: ['setTimeout'], message: 'Use eventually/until or pause(ms, why) from test/support/eventually.ts.' }] },
      ],
    },
  },
  {
    // examples/host-app has its own tsconfig.json (its build, where `nest-agent-hooks` is the installed
    // package); in this repository its files are checked in the root program, which maps that name to src/.
    files: ['examples/host-app/**/*.ts'],
    languageOptions: { parserOptions: { projectService: false, project: ['./tsconfig.json'], tsconfigRootDir: import.meta.dirname } },
  },
  {
    // `hooks/` is the core: it imports nothing from the other rooms (DESIGN §2).
    files: ['src/hooks/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*', '!../hooks/*'],
              message: 'src/hooks may import nothing from the other rooms (DESIGN §2); define a port in hooks/hook-ports.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    // The tracing room sits beside hooks/: any room may use it, it uses none but hooks/ (and the module's options).
    files: ['src/tracing/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*', '!../hooks', '!../hooks/*', '!../agent-hooks.options.js', '!../agent-hooks.module-definition.js'],
              message: 'src/tracing imports nothing from the other rooms but hooks/ (DESIGN §2).',
            },
          ],
        },
      ],
    },
  },
  {
    // The runtime (the library a host mounts) never reaches into the standalone server: what both need,
    // the read API's shapes and loops (DESIGN §12), lives in runtime/reading and the server uses it.
    files: ['src/runtime/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/server', '**/server/*', '**/server/**'],
              message: 'src/runtime imports nothing from src/server (DESIGN §12): move what both need into src/runtime/reading.',
            },
          ],
        },
      ],
    },
  },
  {
    // The server reads operations through the runtime's read port (`OPERATION_READER`), never through
    // persistence's stores, entities or records (DESIGN §2); readiness and the purge through DATABASE_MAINTENANCE.
    files: ['src/server/api/**/*.ts', 'src/server/ops/**/*.ts', 'src/server/*.controller.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../../persistence/*', '../../persistence/**', '../persistence/*', '../persistence/**'],
              message: 'src/server reads through OPERATION_READER and DATABASE_MAINTENANCE (src/runtime/*.port.ts), not persistence internals (DESIGN §2).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/cli/**/*.ts', 'bench/**', 'scripts/**', 'examples/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-unused-vars': 'off' },
  },
);
