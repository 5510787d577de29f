/**
 * The audit command's configuration module: loaded within a deadline (its function of env may
 * start your app and the emulator), and its close() run within another, so neither can hold the
 * command for good.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { configIsDirectory, importConfigModule } from '../../middleware/options/config-module.ts';
import { describeQuotingError, noSuchConfigFile } from '../../middleware/printable-errors.ts';
import { callHook } from './hooks.ts';
import { AUDIT_OPTION_NAMES } from './option-names.ts';
import type { AuditOptions } from './options.ts';

export type CommandEnv = Readonly<Record<string, string | undefined>>;

/** What the configuration module gives: the options, and how to stop what it started. */
export type AuditConfig = AuditOptions & { close?: () => Promise<void> };

/** Arguments or a configuration the command cannot use: said with its usage. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** How long your close() gets; one that fails later still says why, while the process runs. */
const CLOSE_MS = 30_000;

/** How long the configuration gets to load and answer (its function of env may start your app and the emulator). */
const LOAD_MS = 120_000;

/**
 * The configuration within LOAD_MS: one whose top-level code or function of env waits on something
 * that never answers ends the command with that said, never holds it (nor, holding nothing, lets
 * node end it with nothing said).
 */
export async function loadConfig(file: string, env: CommandEnv): Promise<AuditConfig> {
  const path = resolve(file);
  if (!existsSync(path)) throw new UsageError(noSuchConfigFile(file, path));
  if (statSync(path).isDirectory()) throw new UsageError(configIsDirectory(file));
  const loading = configOf(path, file, env);
  // Its failure after the deadline is nobody's.
  loading.catch(() => {});
  // Not unref'd: holding nothing else, the command still lives to say so.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `--config ${file}: loading it and its function of env did not finish within ${LOAD_MS} ms: does it wait on something that never answers?`,
          ),
        ),
      LOAD_MS,
    );
  });
  try {
    return await Promise.race([loading, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function configOf(path: string, file: string, env: CommandEnv): Promise<AuditConfig> {
  const loaded = await importConfigModule(file, path, (message) => new UsageError(message));
  const names = Object.keys(loaded);
  // Its exports are read as the options only when they name some (a config of named exports): an
  // `export const options = {...}` would be read as an audit of no options, each problem listed.
  if (loaded.default === undefined && !names.some((name) => (AUDIT_OPTION_NAMES as readonly string[]).includes(name))) {
    const given =
      names.length === 0
        ? 'it exports nothing'
        : `it exports ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', ...' : ''}`;
    throw new UsageError(
      `--config ${file} has no default export (${given}): export the audit's options, or a function of env returning them, as default.`,
    );
  }
  const exported = loaded.default ?? loaded;
  const config =
    typeof exported === 'function'
      ? await callHook(`--config ${file}'s default export`, LOAD_MS, () =>
          Promise.resolve()
            .then(() => (exported as (env: CommandEnv) => unknown)(env))
            .catch((error: unknown) => {
              // A message quoting the code's text (a secret pasted without quotes) is not passed on.
              const quoting = describeQuotingError(error);
              throw quoting === undefined ? error : new Error(quoting);
            }),
        )
      : exported;
  if (typeof config !== 'object' || config === null) {
    throw new UsageError(`--config ${file}: export the audit's options (or a function returning them) as default.`);
  }
  return config as AuditConfig;
}

/**
 * Runs your close(): one that hangs or throws (or a `close` getter that throws) never keeps the
 * command from answering (callHook's deadline holds the process until it answers). Resolves false
 * when it failed, said on one line by `printable` (no secret, no URL's password, no stack).
 */
export async function closeConfig(
  config: AuditConfig,
  warn: (text: string) => void,
  printable: (error: unknown) => string,
): Promise<boolean> {
  try {
    await callHook(
      'your close()',
      CLOSE_MS,
      () => config.close?.call(config),
      (error) => warn(`your close() failed after its deadline: ${printable(error)}\n`),
    );
    return true;
  } catch (error) {
    warn(`${printable(error)}\n`);
    return false;
  }
}
