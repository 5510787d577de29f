/**
 * `hosted-sms-verify-kit --version` (and `-v`) prints the version in the package's own package.json,
 * the one next to dist/ where the bin is installed (never the integrator's in the working directory),
 * and exits 0; the top-level usage lists it. Runs the bin as built: needs `npm run build` (npm test
 * builds dist/ first).
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-cli-version-'));
  // The working directory is an app whose own package.json has another name and version.
  const app = join(dir, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'my-app', version: '7.7.7' }));
  // The package installed elsewhere with a version of its own: the bin reads the package.json beside its dist/.
  const installed = join(dir, 'installed');
  cpSync(join(ROOT, 'dist'), join(installed, 'dist'), { recursive: true });
  writeFileSync(
    join(installed, 'package.json'),
    JSON.stringify({ name: 'hosted-sms-verify-kit', version: '3.1.4-rc.1', type: 'module' }),
  );
  symlinkSync(join(ROOT, 'node_modules'), join(installed, 'node_modules'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(main: string, ...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const options = { cwd: join(dir, 'app'), env: { PATH: process.env.PATH ?? '' }, timeout: 20_000 };
  return new Promise((resolve) => {
    execFile(process.execPath, [main, ...argv], options, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
    );
  });
}

describe('hosted-sms-verify-kit --version', () => {
  it.each(['--version', '-v'])('%s prints the package version and exits 0', async (flag) => {
    expect(await run(MAIN, flag)).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it("reads the package.json next to the bin's dist/, not the working directory's", async () => {
    const installed = join(dir, 'installed', 'dist', 'cli', 'main.js');
    expect(await run(installed, '--version')).toEqual({ code: 0, stdout: '3.1.4-rc.1\n', stderr: '' });
  });

  it('the top-level usage lists it', async () => {
    const help = await run(MAIN, '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^ {2}--version +print the version of this package \(also -v\)$/m);
  });
});
