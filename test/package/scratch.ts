/**
 * The new integrator's scratch apps for test/package/: the tarball packed once, then installed the
 * way the README's "Install" section says, in directories outside the repository. npm works from
 * its cache (`--prefer-offline`); install scripts are skipped and better-sqlite3's native build is
 * copied from the repository's (the same version), because building it again needs the network.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
export const repoBin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

/** The body of the first fenced block of `language` after the heading `heading` (exact text). */
export function fencedBlock(markdown: string, heading: string, language: string): string {
  const at = markdown.split('\n').findIndex((line) => /^#+ /.test(line) && line.replace(/^#+ /, '') === heading);
  if (at === -1) throw new Error(`README has no heading "${heading}"`);
  const rest = markdown
    .split('\n')
    .slice(at + 1)
    .join('\n');
  const block = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(rest);
  if (block === null) throw new Error(`no \`\`\`${language} block after "${heading}"`);
  return block[1]!;
}

/**
 * The README's smallest complete app copied as `server.mjs` into a new temporary directory (named
 * from `prefix`), its dependencies linked as an install gives them: the kit itself and the packages
 * the README installs. Returns the directory; the caller removes it.
 */
export function readmeAppDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'hosted-sms-verify-kit'));
  for (const name of ['express', 'express-session', 'better-sqlite3']) {
    symlinkSync(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name));
  }
  writeFileSync(join(dir, 'server.mjs'), fencedBlock(README, 'The smallest complete app', 'js'));
  return dir;
}

/** The `npm install` commands of a README block, as argument lists. */
export function installCommands(block: string): string[][] {
  return block
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line.startsWith('npm install '))
    .map((line) => line.split(/\s+/).slice(1));
}

export async function pack(work: string): Promise<{ tarball: string; files: string[] }> {
  // `npm test` builds dist/ first; packing without the prepack build keeps dist/ in place for the
  // suites running beside this one (a rebuild would delete it under them).
  const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT });
  const [report] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [
    { filename: string; files: { path: string }[] },
  ];
  return { tarball: join(work, report.filename), files: report.files.map((file) => file.path) };
}

const repoVersion = (name: string) =>
  (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * A fresh app at `dir` (or one that already declares `existing`, e.g. its Express) with the README's
 * install commands run in it: the package name stands for the tarball, and better-sqlite3 for the
 * repository's version (whose native build is copied). Returns what npm printed (warnings included).
 */
export async function installAsReadmeSays(
  dir: string,
  tarball: string,
  commands: string[][],
  existing: { dependencies?: Record<string, string>; devDependencies?: Record<string, string> } = {},
): Promise<string> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'scratch-integrator-app', private: true, type: 'module', ...existing }),
  );
  let printed = '';
  for (const args of commands) {
    const pinned = args.map((arg) =>
      arg === 'hosted-sms-verify-kit' ? tarball : arg === 'better-sqlite3' ? `better-sqlite3@${repoVersion(arg)}` : arg,
    );
    const { stdout, stderr } = await run(
      'npm',
      [...pinned, '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=warn'],
      {
        cwd: dir,
        timeout: 180_000,
      },
    );
    printed += `$ npm ${args.join(' ')}\n${stdout}${stderr}`;
  }
  const sqlite = join(dir, 'node_modules', 'better-sqlite3');
  if (existsSync(sqlite))
    cpSync(join(ROOT, 'node_modules', 'better-sqlite3', 'build'), join(sqlite, 'build'), { recursive: true });
  return printed;
}

/** Top-level and nested package names `npm ls` reports for `dir`, e.g. with `--omit=dev`. */
export async function listed(dir: string, ...flags: string[]): Promise<string[]> {
  const { stdout } = await run('npm', ['ls', '--all', '--parseable', ...flags], { cwd: dir }).catch(
    (error: { stdout: string }) => error,
  );
  return stdout
    .split('\n')
    .filter((line) => line.includes('node_modules'))
    .map((line) => line.slice(line.lastIndexOf('node_modules/') + 'node_modules/'.length));
}
