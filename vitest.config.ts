import { configDefaults, defineConfig } from 'vitest/config';
import { LongFilesFirst } from './test/support/long-files-first.ts';

// CI asks for a machine-readable report to print its summary line; locally the default reporter is enough.
const jsonReport = process.env.VITEST_JSON_REPORT;

/**
 * The suites that mount the kit in an app (routes, landing, step-up, audit, testing helpers), run a
 * second time with `express` resolved to Express 4, the other major the peer range accepts. The
 * package test installs a real Express 4 app from the tarball instead.
 */
const ON_EXPRESS_4 = [
  'test/kit/express-major.test.ts',
  'test/kit/config.test.ts',
  'test/kit/flow.test.ts',
  'test/kit/hook-failures.test.ts',
  'test/kit/late-hook-errors.test.ts',
  'test/kit/start.test.ts',
  'test/kit/mobile.test.ts',
  'test/security/duplicate-params.test.ts',
  'test/security/malformed-params.test.ts',
  'test/kit/entered-number.test.ts',
  'test/kit/step-up.test.ts',
  'test/kit/step-up-testing-helper.test.ts',
  'test/kit/step-up-methods.test.ts',
  'test/kit/step-up-cache.test.ts',
  'test/kit/step-up-bind-to-input.test.ts',
  'test/kit/step-up-untrusted-hooks.test.ts',
  'test/kit/step-up-unenrolled-next.test.ts',
  'test/kit/step-up-stacked.test.ts',
  'test/kit/step-up-bypasses.test.ts',
  'test/kit/step-up-revoke-kept.test.ts',
  'test/kit/step-up-replace-race.test.ts',
  'test/kit/step-up-page-at-once.test.ts',
  'test/kit/step-up-keep-after-reads.test.ts',
  'test/kit/step-up-replace-expired.test.ts',
  'test/kit/step-up-allowed-origins.test.ts',
  'test/kit/step-up-start.test.ts',
  'test/kit/step-up-other-sites.test.ts',
  'test/kit/step-up-telemetry.test.ts',
  'test/kit/step-up-resource-key.test.ts',
  'test/kit/step-up-kept-path-spelling.test.ts',
  'test/kit/step-up-kept-size.test.ts',
  'test/audit/fixtures.test.ts',
  'test/audit/sound-apps.test.ts',
  'test/audit/step-up-cross-site-bound.test.ts',
  'test/audit/redirect-before-start.test.ts',
  'test/audit/redirected-scripts.test.ts',
  'test/audit/replay-other-browser.test.ts',
  'test/audit/limits-burst-refusals.test.ts',
  'test/audit/read-api-relayed.test.ts',
  'test/audit/step-up-cross-site-unbound.test.ts',
  'test/audit/step-up-redirect-plants.test.ts',
  'test/audit/step-up-refusals.test.ts',
  'test/emulator/testing-entry.test.ts',
  'test/emulator/handler-rejections.test.ts',
  'test/emulator/hosted-page-flow.test.ts',
];

/**
 * Files that need a process of their own: they judge what the kit does with state it keeps per
 * process (every client secret a kit was given, remembered for redaction), which the files before
 * them in a shared worker would have filled.
 */
const IN_A_FRESH_PROCESS = ['test/sweep/job-huge-errors.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // A worker runs file after file in one process: the kit, Express and the emulator are imported
    // once per worker, not once per file (most of a short file's time). Each file closes what it
    // opens and restores what it changes (servers, timers, env, telemetry providers).
    isolate: false,
    // What the kit keeps per process (the secrets it redacts) starts empty in each file.
    setupFiles: ['test/support/secrets-per-file.ts'],
    // The long files start first, so no worker waits at the end (the list and why: the sequencer's module).
    sequence: { sequencer: LongFilesFirst },
    reporters: jsonReport ? ['default', 'json'] : ['default'],
    outputFile: jsonReport ? { json: jsonReport } : undefined,
    projects: [
      {
        extends: true,
        test: {
          name: 'express5',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...IN_A_FRESH_PROCESS],
          env: { EXPECTED_EXPRESS_MAJOR: '5' },
        },
      },
      {
        extends: true,
        test: {
          name: 'express5-fresh',
          include: IN_A_FRESH_PROCESS,
          isolate: true,
          env: { EXPECTED_EXPRESS_MAJOR: '5' },
        },
      },
      {
        extends: true,
        // An exact-match alias, so express-session and other `express-*` packages stay as they are.
        resolve: { alias: [{ find: /^express$/, replacement: 'express4' }] },
        test: {
          name: 'express4',
          include: ON_EXPRESS_4,
          env: {
            EXPECTED_EXPRESS_MAJOR: '4',
            // The sound app, and flaws whose own code is a path-less match and a rewritten method and body.
            AUDIT_FLAWS: 'none,remembersAnyNext,getStartLink',
          },
        },
      },
    ],
  },
});
