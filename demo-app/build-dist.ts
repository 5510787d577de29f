/**
 * `npm run demo` and `npm run sweep` build dist/ (the kit as the demo imports it) through this,
 * so two starts from one checkout never race: one build at a time under a lock directory, no
 * build when dist/ was built from the same sources, and a new dist/ compiled beside the old one
 * and swapped in, so a process loading the old one never sees a half-written tree.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(root, 'dist');
const LOCK = path.join(root, 'dist.lock');
const STAMP = path.join(DIST, '.sources-hash');
const INPUTS = ['middleware', 'emulator', 'testing', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];
const LOCK_WAIT_MS = 5 * 60_000;

/** A hash of every file the build reads, so an unchanged tree is not built again. */
function sourcesHash(): string {
  const hash = createHash('sha256');
  const visit = (file: string): void => {
    if (statSync(file).isDirectory()) {
      for (const name of readdirSync(file).sort()) visit(path.join(file, name));
      return;
    }
    hash.update(path.relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  };
  for (const input of INPUTS) visit(path.join(root, input));
  return hash.digest('hex');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid of the lock's holder; 0 while it is being taken (or was just released). */
function lockHolder(): number {
  try {
    return Number(readFileSync(path.join(LOCK, 'pid'), 'utf8')) || 0;
  } catch {
    return 0;
  }
}

/** Takes the lock (a directory: mkdir is atomic), breaking one whose builder died. */
async function lock(): Promise<void> {
  const giveUpAt = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(path.join(LOCK, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = lockHolder();
    if (holder > 0 && !isAlive(holder)) rmSync(LOCK, { recursive: true, force: true });
    if (Date.now() > giveUpAt) throw new Error(`dist.lock is still held after ${LOCK_WAIT_MS / 1000} s; remove it.`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Compiles into a directory of its own, then swaps it in for dist/. */
function build(hash: string): void {
  const fresh = path.join(root, `dist.build-${process.pid}`);
  const old = path.join(root, `dist.old-${process.pid}`);
  rmSync(fresh, { recursive: true, force: true });
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', fresh], {
    cwd: root,
    stdio: 'inherit',
  });
  writeFileSync(path.join(fresh, path.basename(STAMP)), hash);
  if (existsSync(DIST)) renameSync(DIST, old);
  renameSync(fresh, DIST);
  rmSync(old, { recursive: true, force: true });
}

async function main(): Promise<void> {
  await lock();
  try {
    const hash = sourcesHash();
    const built = existsSync(STAMP) ? readFileSync(STAMP, 'utf8') : undefined;
    if (built !== hash) build(hash);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
