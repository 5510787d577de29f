/**
 * Loading the module a command's `--config` names (the sweep job's, the audit's): what to say when
 * node would not load it as it is, in words that name the fix (node's own name none).
 */
import { extname } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The refusal of a `--config` naming a directory (node's own words name no fix). */
export function configIsDirectory(file: string): string {
  return `--config ${file}: is a directory; name the module in it (e.g. --config ${file}/verify.config.js).`;
}

/** Node's codes for a module it would not load as it is: a .ts file, a JSON file without `with { type: 'json' }`. */
const NOT_A_MODULE_NODE_LOADS = new Set([
  'ERR_UNKNOWN_FILE_EXTENSION',
  'ERR_IMPORT_ATTRIBUTE_MISSING',
  'ERR_IMPORT_ASSERTION_TYPE_MISSING',
]);

/**
 * What to name instead when node would not load the `--config` file at `path` itself as a module
 * (its own words name no fix); undefined for any other failure, a module it imports included.
 */
function configNodeDoesNotLoad(error: unknown, file: string, path: string): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const message = error instanceof Error ? error.message : '';
  const ofThisFile = message.includes(path) || message.includes(pathToFileURL(path).href);
  if (typeof code !== 'string' || !NOT_A_MODULE_NODE_LOADS.has(code) || !ofThisFile) return undefined;
  const ext = extname(path).toLowerCase();
  const kind = ext === '.json' ? 'a JSON file' : ext === '' ? 'a file without an extension' : `a ${ext} file`;
  return (
    `--config ${file}: node does not load ${kind} as a module; name a JavaScript module (.js, .mjs or .cjs; ` +
    'compile a TypeScript one first) whose default export is the configuration: its store and actions are code.'
  );
}

/**
 * The module at `path` (named `file` on the command line); when node would not load it as it is,
 * `refuse` of what to name instead (each command's usage error).
 */
export async function importConfigModule(
  file: string,
  path: string,
  refuse: (message: string) => Error,
): Promise<{ default?: unknown }> {
  try {
    return (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    const instead = configNodeDoesNotLoad(error, file, path);
    throw instead === undefined ? error : refuse(instead);
  }
}
