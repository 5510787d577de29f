/**
 * What `files` in package.json lets into the tarball from examples/: the examples' own files, not
 * what running them leaves beside them (git ignores those, npm would not). Packed from a copy, so
 * nothing is planted in the working tree.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ROOT } from './scratch.ts';

const copy = mkdtempSync(join(tmpdir(), 'verify-kit-files-'));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

it('ships every example file the repository tracks and nothing a run of the examples leaves there (.env, SQLite files, a build, a lockfile)', () => {
  const tracked = execFileSync('git', ['ls-files', 'examples'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n');
  cpSync(join(ROOT, 'package.json'), join(copy, 'package.json'));
  for (const file of tracked) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(join(ROOT, file), join(copy, file));
  }
  const left = [
    'examples/js-app/.env',
    'examples/js-app/app.sqlite',
    'examples/js-app/app.sqlite-wal',
    'examples/js-app/package-lock.json',
    'examples/ts-app/.env',
    'examples/ts-app/dist/src/app.js',
    'examples/ts-app/dist/test/app.test.js',
    'examples/sweep-job/.env',
  ];
  for (const file of left) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    writeFileSync(join(copy, file), file.endsWith('.env') ? 'VERIFY_CLIENT_SECRET=a-real-secret\n' : '\n');
  }
  const [report] = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: copy,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  ) as [{ files: { path: string }[] }];
  const shipped = report.files.map((file) => file.path).filter((path) => path.startsWith('examples/'));
  expect(shipped.sort()).toEqual(tracked.sort());
});
