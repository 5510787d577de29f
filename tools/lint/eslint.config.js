// The rule-based lint: typescript-eslint `strict`, plus the two type-aware rules the house asks for. Formatting is
// Prettier's job (`prettier --check`), so no stylistic rules here.
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'coverage/**',
      'bench/results/**',
      'test-results/**',
      // A scratch integrator app type-checked against the packed declarations by its own tsconfig, not our program.
      'test/package/consumer/**',
      // Integrators' apps, each type-checked by its own tsconfig against the packed tarball (test/package/).
      'examples/**',
    ],
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.strict],
    languageOptions: {
      parserOptions: {
        // TypeScript 5.9 (this workspace's) builds the program; the root's TypeScript 7 has no JavaScript API.
        project: './tools/lint/tsconfig.json',
        tsconfigRootDir: repoRoot,
      },
    },
    rules: {
      // A switch over a union names every member, so adding a status or an error code shows each place to decide.
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true, requireDefaultForNonUnion: false },
      ],
      // Type-only imports say so, which `verbatimModuleSyntax` relies on to erase them.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // Express tells an error handler by its four parameters, so an unused `_next` must stay; `_` marks it as meant.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The kit, the demo, the emulator and the bench stay easy to change: a module holds one concern and a
    // function does one job.
    files: ['middleware/**/*.ts', 'demo-app/**/*.ts', 'emulator/**/*.ts', 'testing/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    // Tests and the bench assert on values they have just produced; a wrong `!` there throws and fails the run, which
    // is what a check should do. Shipped code (kit, emulator, demo) keeps the rule.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
