/** Loads the integrator's configuration module (`--config ./verify.config.js`), saying what is wrong with it. */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from './command.ts';

/** The module's default export (or, for CommonJS, its `module.exports`). */
export async function loadConfigModule(file: string, cwd = process.cwd()): Promise<unknown> {
  const path = resolve(cwd, file);
  if (!existsSync(path)) throw new UsageError(`--config ${file}: no such file (looked at ${path}).`);
  const loaded = (await import(pathToFileURL(path).href)) as { default?: unknown };
  return loaded.default ?? loaded;
}
