/**
 * What an integrator installs: `npm pack` gives a tarball of JavaScript and declarations only; it
 * passes publint and "are the types wrong"; installed into a scratch app outside the repository,
 * it works from plain Node ESM (a whole verification, one fulfilment, also after a reload of the
 * landing), from CommonJS `require()`, and from a strict TypeScript project (module node16).
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONSUMER = fileURLToPath(new URL('./consumer', import.meta.url));
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

interface PackedManifest {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

let work: string;
let tarball: string;
let app: string;
let files: string[];

/** Links a package from the repository's node_modules (no second native build of better-sqlite3). */
function linkFromRepo(name: string): void {
  const target = join(app, 'node_modules', name);
  mkdirSync(dirname(target), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules', name), target, 'dir');
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'verify-kit-package-'));
  // `npm test` builds dist/ first; packing without the prepack build keeps dist/ in place for the
  // suites running beside this one (a rebuild would delete it under them).
  const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT });
  const [report] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [
    { filename: string; files: { path: string }[] },
  ];
  tarball = join(work, report.filename);
  files = report.files.map((file) => file.path);

  // The scratch app lives outside the repository; the tarball itself is unpacked into its
  // node_modules as npm would, and only the kit's own dependencies are linked.
  app = join(work, 'app');
  const installed = join(app, 'node_modules', 'hosted-sms-verify-kit');
  mkdirSync(installed, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as PackedManifest;
  const forTheApp = ['express-session', '@types/node', '@types/express', '@types/better-sqlite3'];
  const declared = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})];
  for (const name of new Set([...declared, ...forTheApp])) linkFromRepo(name);
  cpSync(CONSUMER, app, { recursive: true });
  cpSync(join(CONSUMER, 'package.json'), join(app, 'package.json'));
}, 120_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds JavaScript, declarations, the README, LICENSE and CHANGELOG only (no sources, tests, demo, bench or images)', () => {
    const unexpected = files.filter(
      (path) =>
        !/^dist\/.+\.(js|d\.ts)$/.test(path) &&
        !['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'].includes(path),
    );
    expect(unexpected).toEqual([]);
    expect(files).toContain('dist/middleware/index.js');
    expect(files).toContain('dist/middleware/index.d.ts');
    expect(files).toContain('dist/emulator/testing.js');
    expect(files).toContain('dist/emulator/testing.d.ts');
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'CHANGELOG.md', 'README.md']));
  });

  it('passes publint with no errors, warnings or suggestions', async () => {
    const { stdout } = await run(bin('publint'), ['run', tarball, '--strict']);
    expect(stdout).toContain('All good!');
  });

  it('passes "are the types wrong" for every entry point', async () => {
    // Profile esm-only, the two rules it skips being justified: the package is ESM-only with
    // engines node >=20.19, where (1) `node10` resolution (no `exports` support) is not a target,
    // and (2) a CommonJS `require()` of ESM works natively (the CommonJS consumer below proves it).
    const result = await run(bin('attw'), [tarball, '--profile', 'esm-only', '--format', 'json']).catch(
      (error: { stdout: string }) => error,
    );
    const analysis = JSON.parse(result.stdout) as {
      analysis: { problems: unknown[]; entrypoints: Record<string, unknown> };
    };
    expect(Object.keys(analysis.analysis.entrypoints).sort()).toEqual([
      '.',
      './package.json',
      './postgres',
      './sqlite',
      './testing',
    ]);
    const relevant = analysis.analysis.problems.filter(
      (problem) =>
        !['CJSResolvesToESM'].includes((problem as { kind: string }).kind) &&
        (problem as { resolutionKind?: string }).resolutionKind !== 'node10',
    );
    expect(relevant).toEqual([]);
  });
});

describe('installed into an app outside the repository', () => {
  it('an ESM app on plain node mounts the routers against ./testing, verifies once, and a reload fulfils nothing more', async () => {
    const { stdout } = await run(process.execPath, ['esm-app.mjs'], { cwd: app, timeout: 60_000 });
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(seen).toEqual({
      startStatus: 200,
      startCacheControl: expect.stringContaining('no-store'),
      codeStatus: 303,
      landingUrlStartsWithReturnUrl: true,
      landing: { status: 303, location: '/done' },
      reload: { status: 303, location: '/done' },
      fulfilmentsAfterLanding: 1,
      fulfilmentsAfterReload: 1,
      smsSent: 1,
    });
  });

  it('a CommonJS file require()s the package and its ./testing entry, whose surface holds no internals', async () => {
    const { stdout } = await run(process.execPath, ['cjs-app.cjs'], { cwd: app });
    expect(JSON.parse(stdout.trim())).toEqual({
      createVerificationKit: 'function',
      createSqliteStore: 'function',
      runSweepJob: 'function',
      internalsExported: [],
      kitErrorCodes: expect.any(Number),
      startEmulator: 'function',
      emulatorControl: 'function',
    });
  });

  it('a strict TypeScript project (module node16) type-checks a kit configuration and startEmulator against the shipped declarations', async () => {
    const result = await run(bin('tsc'), ['-p', join(app, 'tsconfig.json')], { cwd: app }).then(
      ({ stdout }) => ({ exitCode: 0, stdout }),
      (error: { stdout: string; code: number }) => ({ exitCode: error.code, stdout: error.stdout }),
    );
    expect(result).toEqual({ exitCode: 0, stdout: '' });
    // The declarations, not a copy of the sources, are what it checked against.
    expect(readdirSync(join(app, 'node_modules', 'hosted-sms-verify-kit'))).not.toContain('middleware');
  });
});
