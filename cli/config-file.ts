/** Loads the integrator's configuration module (`--config ./verify.config.js`), saying what is wrong with it. */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { configIsDirectory, importConfigModule } from '../middleware/options/config-module.ts';
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
  if (statSync(path).isDirectory()) throw new UsageError(configIsDirectory(file));
  const loaded = await keepingProcessAlive(() =>
    withDeadline(
      'configuration',
      ms,
      () => importConfigModule(file, path, (message) => new UsageError(message)),
      () =>
        new Error(
          `--config ${file}: loading it did not finish within ${ms} ms: does its top-level code wait on something that never answers?`,
        ),
    ),
  );
  return loaded.default ?? loaded;
}
