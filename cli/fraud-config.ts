/**
 * The kit `hosted-sms-verify-kit fraud --config` names, loaded within a deadline, and the close of
 * what that configuration opened, which never holds the command.
 */
import { createVerificationKit, type VerificationKit } from '../middleware/create-kit.ts';
import { keepingProcessAlive, withDeadline } from '../middleware/deadline.ts';
import { environmentSecrets, redactSecretFragments } from '../middleware/errors.ts';
import { cutForPrinting, describeQuotingError, withoutUrlPasswords } from '../middleware/printable-errors.ts';
import { describeError } from '../middleware/logger.ts';
import { watchUnhandledErrors, type UnhandledErrorWatch } from '../middleware/sweep/unhandled-errors.ts';
import type { VerificationKitOptions } from '../middleware/options/options.ts';
import { UsageError, type CommandEnv, type CommandOutput } from './command.ts';
import { loadConfigModule } from './config-file.ts';

export interface Loaded {
  kit: VerificationKit<unknown>;
  close(): Promise<void>;
}

/** How long a configuration's function of env gets to answer (the sweep job's own deadline for it). */
const BUILD_MS = 10_000;

/**
 * A configuration's function of env, within BUILD_MS: one that waits on something that never
 * answers ends the command with that said, never holds it (nor lets it end saying nothing).
 */
function built(factory: (env: CommandEnv) => unknown, env: CommandEnv, file: string): Promise<unknown> {
  return keepingProcessAlive(() =>
    withDeadline(
      'configuration',
      BUILD_MS,
      () => factory(env),
      () =>
        new Error(
          `--config ${file}: its function of env did not answer within ${BUILD_MS} ms: does it wait on something that never answers?`,
        ),
    ),
  );
}

/** The kit the configuration names (ready, or built with no route), and how to close what it opened. */
export async function load(file: string, env: CommandEnv, watch?: UnhandledErrorWatch): Promise<Loaded> {
  const exported = await loadConfigModule(file);
  const given: unknown =
    typeof exported === 'function' ? await built(exported as (e: CommandEnv) => unknown, env, file) : exported;
  const owning =
    typeof given === 'object' && given !== null && 'kit' in given
      ? (given as { kit: unknown; close?: () => unknown })
      : undefined;
  const value = owning?.kit ?? given;
  if (typeof value !== 'object' || value === null) {
    throw new UsageError(
      `--config ${file}: its default export must be the kit's options, a kit, { kit, close }, or a function of env returning one of them.`,
    );
  }
  // The options may carry a `pumping` option, an object too: a kit is told by what it can do.
  const ready = typeof (value as Partial<VerificationKit<unknown>>).pumping?.tripped === 'function';
  const options = value as VerificationKitOptions<unknown>;
  const kit = ready
    ? (value as VerificationKit<unknown>)
    : createVerificationKit<unknown>({
        ...options,
        resolveUser: options.resolveUser ?? (() => null),
        routes: { start: false, landing: false },
      });
  watch?.ready();
  return {
    kit,
    async close() {
      await kit.close();
      if (!ready) await kit.store.close();
      await owning?.close?.();
    },
  };
}

/** How long what the configuration opened gets to close (the sweep job's own deadline for it). */
const CLOSE_MS = BUILD_MS;

/**
 * An error's message as a line of stderr may show it: no secret of the environment, no URL's
 * password, no phone number, cut; of one that quotes the code's text, where it is instead.
 */
function printable(error: unknown, env: CommandEnv): string {
  const message = describeQuotingError(error) ?? String(describeError(error).message);
  return cutForPrinting(withoutUrlPasswords(redactSecretFragments(message, environmentSecrets(env))));
}

/**
 * The configuration's code runs in the command's process: a promise it left floating, or a timer
 * of its own that throws, would end the command with Node's report (its stack, and its message
 * whole: the client secret, a number). Each is one line on stderr instead, and the command goes
 * on; those that come before the kit is built (its secret not yet known to be hidden) are said
 * once it is, or not shown. Kept until the process exits.
 */
export function sayUnhandledErrors(env: CommandEnv, warn: CommandOutput['warn']): UnhandledErrorWatch {
  return watchUnhandledErrors(({ how, error, unsaid }) => {
    const head = 'hosted-sms-verify-kit fraud: ';
    if (how === undefined) {
      warn(`${head}${unsaid} more errors of the configuration's code nothing handled\n`);
      return;
    }
    const said =
      error === undefined || error === 'not shown'
        ? 'not shown: it came before the kit was built, so its client secret is not known to be hidden'
        : printable(error.value, env);
    warn(`${head}the configuration's code ${how} and nothing handled it: ${said}\n`);
  });
}

/**
 * Closes what the configuration opened: a close of its own that hangs or throws is said on stderr
 * and never holds the command, nor changes what it did (its answer is printed already). One that
 * fails after the deadline, while the process still runs, says why on a line of its own.
 */
export async function closeWithin(
  close: () => Promise<void>,
  env: CommandEnv,
  warn: CommandOutput['warn'],
): Promise<void> {
  const onLateRejection = (_name: string, error: unknown) =>
    warn(
      `hosted-sms-verify-kit fraud: closing what the configuration opened failed after its deadline: ${printable(error, env)}\n`,
    );
  try {
    await keepingProcessAlive(() =>
      withDeadline('close', CLOSE_MS, close, {
        late: () => new Error(`closing did not finish within ${CLOSE_MS} ms`),
        onLateRejection,
      }),
    );
  } catch (error) {
    warn(`hosted-sms-verify-kit fraud: could not close what the configuration opened: ${printable(error, env)}\n`);
  }
}
