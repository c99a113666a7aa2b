// ESLint for sendpool (`npm run lint`): typescript-eslint's type-checked recommended rules over the
// sources, tests, benchmarks and scripts, the types coming from tsconfig.json (project service).
// Formatting is not checked here. Where a rule is tuned, the reason is beside it.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'bench/.build/', 'node_modules/', '.ci/', 'coverage/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `_` marks a parameter a signature needs and the body does not (a port's method, a callback).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Types-only imports are `import type` (verbatimModuleSyntax needs it for emit anyway).
      // `import('x').T` in a type stays allowed: optional packages (libsql, smpp, prom-client) are
      // loaded on demand, and a static `import type` line would read as a dependency of the file.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      // An `async` implementation of a port that returns a promise (a channel's `send`, a storage's
      // `write`) turns a throw into a rejection, which callers rely on; it need not await.
      '@typescript-eslint/require-await': 'off',
      // A `let` assigned once, after closures that read it were made (a callback wired before the
      // server it logs to exists), cannot be a `const`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Plain JavaScript (this file, the busy-loop script, examples): no type information.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The operator dashboard's script runs in the browser (src/server/dashboard/assets/).
    files: ['src/server/dashboard/assets/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
  {
    // Tests read JSON answers and child-process output as `any` on purpose: asserting their shape
    // is the test. The unsafe-any rules would ask for a cast at every `expect`.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // `expect(spy.method)` and handing a fake's method to the code under test are the point.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
