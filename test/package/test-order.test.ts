/**
 * The sequencer's list of long files (test/support/long-files-first.ts) names files that exist, in
 * a project that runs them: a renamed or moved file would otherwise silently fall back to vitest's
 * own order, and a minutes-long file could start last again.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { LONG_FILES } from '../support/long-files-first.ts';
import config from '../../vitest.config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

it('every long file the sequencer starts first exists and runs in the project it is listed under', () => {
  const projects = new Map(
    (config.test?.projects ?? []).map((p) => {
      const test = (p as { test?: { name?: string; include?: string[] } }).test;
      return [test?.name ?? '', test?.include ?? []] as const;
    }),
  );
  const wrong = LONG_FILES.filter((entry) => {
    const [project = '', file = ''] = entry.split(':');
    const include = projects.get(project);
    if (include === undefined || !existsSync(`${root}${file}`)) return true;
    // express5 takes every test file; express4 lists its files one by one.
    return !include.includes(file) && !include.includes('test/**/*.test.ts');
  });
  expect(wrong).toEqual([]);
  expect(LONG_FILES.length).toBeGreaterThan(10);
});
