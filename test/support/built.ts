/**
 * Files of the package as built in dist/. `npm test` builds dist/ before vitest runs; a suite that
 * runs the built bin asks here, so a missing build fails with the command that makes it rather than
 * with a child process's "Cannot find module".
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What tsconfig.build.json compiles into dist/. */
const BUILT_SOURCES = ['middleware', 'emulator', 'testing', 'cli'];

let newestSource: { at: number; file: string } | undefined;

/** The most recently changed TypeScript source that dist/ is built from. */
function newestSourceChange(): { at: number; file: string } {
  if (newestSource !== undefined) return newestSource;
  const root = fileURLToPath(new URL('../../', import.meta.url));
  let newest = { at: 0, file: '' };
  for (const dir of BUILT_SOURCES) {
    for (const entry of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const file = join(entry.parentPath, entry.name);
      const at = statSync(file).mtimeMs;
      if (at > newest.at) newest = { at, file: file.slice(root.length) };
    }
  }
  newestSource = newest;
  return newest;
}

/**
 * The absolute path of `dist/<pathInDist>`; throws, naming `npm run build`, when it is not there or
 * is older than a source it is built from (a test would otherwise pass or fail on yesterday's code).
 */
export function builtFile(pathInDist: string): string {
  const file = fileURLToPath(new URL(`../../dist/${pathInDist}`, import.meta.url));
  if (!existsSync(file)) {
    throw new Error(
      `dist/${pathInDist} is missing: run \`npm run build\` first (npm test builds dist/ before the tests)`,
    );
  }
  const source = newestSourceChange();
  if (statSync(file).mtimeMs < source.at) {
    throw new Error(
      `dist/${pathInDist} is older than ${source.file}: run \`npm run build\` first (npm test builds dist/ before the tests)`,
    );
  }
  return file;
}

/**
 * The path of a racer process (test/fixtures/<name>, plain JavaScript on the stores as built, so it
 * starts with node alone); throws, naming `npm run build`, when the built stores are missing.
 */
export function racerOnBuiltStores(name: string): string {
  for (const store of ['batch.js', 'sqlite/sqlite.js', 'postgres/postgres.js']) builtFile(`middleware/store/${store}`);
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
}

/**
 * The path of the sweep job process (test/fixtures/sweep-process.mjs, plain JavaScript on the kit as
 * built); throws, naming `npm run build`, when the built job is missing.
 */
export function sweepProcessOnBuiltKit(): string {
  builtFile('middleware/sweep/sweep-job.js');
  return fileURLToPath(new URL('../fixtures/sweep-process.mjs', import.meta.url));
}
