/**
 * The order vitest starts test files in: the long files first, the rest in vitest's own order.
 *
 * Without a results cache (CI runs on a clean clone; the cache lives in node_modules/.vite) vitest
 * orders files by size, so a file that runs for minutes can start near the end while the other
 * worker runs out of files and waits. Starting the longest first lets the many short files fill in
 * around them, and the run ends when the last short file does.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * `project:file` of the files that run longest, longest first, with their seconds in a whole run on
 * the 2-core machine (`CI=true bash .ci/run` on a clean clone). Re-measure when one of them changes
 * much, or when a file not listed grows past the last of them.
 */
export const LONG_FILES = [
  'express5:test/audit/fixtures.test.ts', // 515: the audit against every flaw of the sample app
  'express5:test/audit/harm.test.ts', // 191: two full audits of the demo back to back
  'express5:test/a11y/demo-pages.browser.test.ts', // 140: Chromium through every demo page
  'express5:test/a11y/kit-pages.browser.test.ts', // 108
  'express5:test/package/package.test.ts', // 100: packs the tarball and installs it in scratch apps
  'express5:test/e2e/demo.test.ts', // 58
  'express4:test/audit/fixtures.test.ts', // 52: the sound app and two flaws (AUDIT_FLAWS)
  'express5:test/audit/script-redirects.test.ts', // 32
  'express5:test/faults/crash.test.ts', // 32: app processes killed and restarted
  'express5:test/audit/sound-apps.test.ts', // 31
  'express5:test/sweep/bin.test.ts', // 29
  'express5:test/e2e/demo-change-phone.browser.test.ts', // 26
  'express5:test/sweep/pacing.test.ts', // 24: paced reads in real time
  'express5:test/e2e/demo-step-up.browser.test.ts', // 22
  'express4:test/audit/sound-apps.test.ts', // 22
  'express5:test/audit/page-url-redirects.test.ts', // 22
  'express5:test/multi-instance/race-instances.test.ts', // 19
  'express5:test/sweep/hung-store.test.ts', // 19
  'express5:test/pumping/fraud-command-config.test.ts', // 17: the bin 13 times, most at once
  'express5:test/faults/faults.test.ts', // 17
  'express5:test/store/postgres-store.test.ts', // 17
  'express5:test/kit/pumping.test.ts', // 16
  'express5:test/store/conformance.test.ts', // 16: four-process races on each store
  'express5:test/audit/false-passes.test.ts', // 16
];

/** Starts the files of LONG_FILES first, in its order; every other file keeps vitest's own order. */
export class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const index = LONG_FILES.indexOf(`${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`);
      return index === -1 ? LONG_FILES.length : index;
    };
    // Array sort is stable: files of equal rank (all the short ones) stay in vitest's order.
    return [...ordered].sort((a, b) => rank(a) - rank(b));
  }
}
