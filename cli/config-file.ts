/** Loads the integrator's configuration module (`--config ./verify.config.js`), saying what is wrong with it. */
import { existsSync, statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { keepingProcessAlive, withDeadline } from '../middleware/deadline.ts';
import { noSuchConfigFile } from '../middleware/printable-errors.ts';
import { UsageError } from './command.ts';

/** How long a configuration module's own top-level code gets to load. */
export const LOAD_MS = 10_000;

/**
 * The module's default export (or, for CommonJS, its `module.exports`). Top-level code that waits on
 * something that never answers ends the command with that said, within `ms`: it never holds the
 * command, nor (holding nothing) lets node end it with nothing said.
 */
export async function loadConfigModule(file: string, cwd = process.cwd(), ms = LOAD_MS): Promise<unknown> {
  const path = resolve(cwd, file);
  if (!existsSync(path)) throw new UsageError(noSuchConfigFile(file, path));
  if (statSync(path).isDirectory()) {
    throw new UsageError(
      `--config ${file}: is a directory; name the module in it (e.g. --config ${file}/verify.config.js).`,
    );
  }
  const loaded = await keepingProcessAlive(() =>
    withDeadline(
      'configuration',
      ms,
      () => importModule(file, path),
      () =>
        new Error(
          `--config ${file}: loading it did not finish within ${ms} ms: does its top-level code wait on something that never answers?`,
        ),
    ),
  );
  return loaded.default ?? loaded;
}

/** Node's codes for a module it would not load as it is: a .ts file, a JSON file without `with { type: 'json' }`. */
const NOT_A_MODULE_NODE_LOADS = new Set([
  'ERR_UNKNOWN_FILE_EXTENSION',
  'ERR_IMPORT_ATTRIBUTE_MISSING',
  'ERR_IMPORT_ASSERTION_TYPE_MISSING',
]);

/** The module, or what to name instead when node would not load it as it is (its own words name no fix). */
async function importModule(file: string, path: string): Promise<{ default?: unknown }> {
  try {
    return (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
    // Said of this file, not of a module it imports.
    const message = error instanceof Error ? error.message : '';
    const ofThisFile = message.includes(path) || message.includes(pathToFileURL(path).href);
    if (typeof code !== 'string' || !NOT_A_MODULE_NODE_LOADS.has(code) || !ofThisFile) throw error;
    const ext = extname(path).toLowerCase();
    const kind = ext === '.json' ? 'a JSON file' : ext === '' ? 'a file without an extension' : `a ${ext} file`;
    throw new UsageError(
      `--config ${file}: node does not load ${kind} as a module; name a JavaScript module (.js, .mjs or .cjs; ` +
        'compile a TypeScript one first) whose default export is the configuration: its store and actions are code.',
    );
  }
}
