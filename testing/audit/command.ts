/**
 * `hosted-sms-verify-kit audit --config ./audit.config.js [--json] [--only id,id]`: the audit from
 * the command line. The configuration module's default export is the audit's options, or a function
 * of the environment returning them (it may start your app and the emulator, and give `close`).
 * Prints the table (or the JSON report); exit code 0 when no check failed and at least one ran (a
 * check may be listed as not run, when an option it needs was not given), 2 when one failed (or your
 * code, in this process, threw or rejected where nothing handled it, or your close() failed),
 * 1 for a configuration mistake (the audit stopped before its checks, or no check ran, too), 130 or
 * 143 when SIGINT or SIGTERM stopped it (after your close()).
 */
import { closestName } from '../../middleware/closest-name.ts';
import { flagGivenTwice } from '../../middleware/options/command-flags.ts';
import { environmentSecrets, MIN_OTHER_SECRET_LENGTH } from '../../middleware/secret-spellings.ts';
import {
  cutForPrinting,
  describeQuotingError,
  shownArgument,
  withoutUrlPasswords,
} from '../../middleware/printable-errors.ts';
import { AUDIT_CHECK_IDS } from './catalogue.ts';
import { closeConfig, loadConfig, UsageError, type AuditConfig, type CommandEnv } from './command-config.ts';
import { describeThrown } from './hooks.ts';
import { formatAuditJson, formatAuditTable, noCheckRan } from './report.ts';
import { scrubSecret, secretForms } from './secret.ts';
import { auditIntegration } from './runner.ts';
import { maskEveryNumber, maskTypedRange } from './number-mask.ts';
import { keepStdoutForReport } from './report-output.ts';
import { watchUnhandled, type UnhandledErrors } from './unhandled.ts';

export type { AuditConfig, CommandEnv } from './command-config.ts';

const USAGE = `usage: hosted-sms-verify-kit audit --config ./audit.config.js [--json] [--only ID,ID]
  --config FILE   module whose default export is the audit's options, or (env) => options (it may
                  start your app and the emulator, and return close()) (env VERIFY_AUDIT_CONFIG)
  --json          print the JSON report (for CI) instead of the table
  --only IDS      run only these checks (comma-separated ids; or --only=IDS)
Exit codes: 0 no check failed and one ran at least (some may be listed as not run), 1 configuration
  error (or the audit stopped before its checks: the emulator, the wiring or the first sign-in and
  start; or no check ran, each one's reason said on standard error), 2 a check failed (or your code
  threw or rejected where nothing handled it, or your close() failed, each said on standard error),
  130 or 143 stopped by SIGINT (Ctrl-C) or SIGTERM before it finished (your close() run first).`;

function parseArgs(argv: readonly string[], env: CommandEnv) {
  // Kept last, a repeated flag would run the audit on a configuration or checks the operator did not mean.
  const twice = flagGivenTwice(argv, ['--config', '--only']);
  if (twice !== undefined) throw new UsageError(twice);
  let file = env.VERIFY_AUDIT_CONFIG;
  let json = false;
  let only: string[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--config') file = argv[++i];
    else if (arg.startsWith('--config=')) file = arg.slice('--config='.length);
    else if (arg === '--json') json = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      only = (arg === '--only' ? (argv[++i] ?? '') : arg.slice('--only='.length))
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean);
      // An empty variable in CI would audit nothing and pass.
      if (only.length === 0) {
        throw new UsageError(
          '--only names no check: give check ids (comma-separated), or leave --only out to run every check.',
        );
      }
    } else throw new UsageError(`unknown argument ${shownArgument(arg)}.`);
  }
  if (file === undefined || file === '') throw new UsageError('--config FILE is required.');
  if (only !== undefined) refuseUnknownChecks(only);
  return { file, json, only };
}

/**
 * Before the configuration runs (it may start the app and the emulator, and seed a database): a
 * misspelt id refused after all that would have written for nothing. No secret is known yet, so an
 * id as long as one is not quoted back; the id it most likely meant is named instead.
 */
function refuseUnknownChecks(only: readonly string[]): void {
  const unknown = only.filter((id) => !AUDIT_CHECK_IDS.includes(id));
  if (unknown.length === 0) return;
  const named = unknown.map((id) => {
    const meant = closestName(id, AUDIT_CHECK_IDS);
    return meant === undefined ? shownArgument(id) : `${shownArgument(id)} (did you mean ${meant}?)`;
  });
  throw new UsageError(`unknown check id(s) in --only: ${named.join(', ')}. Known: ${AUDIT_CHECK_IDS.join(', ')}.`);
}

/** `text` without the configuration's client secret, in any of its spellings. */
function scrubbed(config: AuditConfig, text: string): string {
  const { clientId, clientSecret } = config as Partial<AuditConfig>;
  if (typeof clientSecret !== 'string' || clientSecret === '') return text;
  return scrubSecret(secretForms(typeof clientId === 'string' ? clientId : '', clientSecret), text);
}

/** The signals that stop an audit, and its exit code for each (128 + the signal's number, as a shell reports it). */
const STOP_SIGNALS = { SIGINT: 130, SIGTERM: 143 } as const;
type StopSignal = keyof typeof STOP_SIGNALS;

/**
 * Ctrl-C or SIGTERM (a CI job cancelled) while the audit runs: the command stops, says so and runs
 * your close() before it exits, so an app or emulator your configuration started in another process
 * is not left running.
 */
type StopWatch = { received: Promise<StopSignal>; dispose: () => void };

function stopSignal(): StopWatch {
  const handlers: [StopSignal, () => void][] = [];
  const received = new Promise<StopSignal>((resolve) => {
    for (const signal of Object.keys(STOP_SIGNALS) as StopSignal[]) {
      const handler = () => resolve(signal);
      handlers.push([signal, handler]);
      process.once(signal, handler);
    }
  });
  return {
    received,
    dispose: () => {
      for (const [signal, handler] of handlers) process.removeListener(signal, handler);
    },
  };
}

export const command = {
  summary: "attack your own app's integration (wired to the emulator) and report check by check",
  usage: USAGE,
  /**
   * Runs the audit; resolves with the exit code. `write` receives what goes to standard output (the
   * report alone: `--json` output is parsed by CI; without `write`, what anything else writes to
   * standard output meanwhile goes to standard error), `warn` what goes to standard error.
   */
  async run(
    argv: readonly string[],
    env: CommandEnv,
    write?: (text: string) => void,
    warn: (text: string) => void = (text) => process.stderr.write(text),
  ): Promise<number> {
    const { file, json, only } = parseArgs(argv, env);
    const output = write === undefined ? keepStdoutForReport() : { report: write, restore: () => {} };
    let loaded: AuditConfig | undefined;
    const unhandled = watchUnhandled(warn, (error) => printable(loaded, env, error));
    // Listened for from the start: a signal while the configuration loads would otherwise end the
    // process at once, saying nothing, and leave what the configuration is starting running.
    const stop = stopSignal();
    try {
      const loadedOrStopped = await loadUnlessStopped(file, env, stop, warn);
      if (typeof loadedOrStopped === 'number') return loadedOrStopped;
      loaded = loadedOrStopped.config;
      unhandled.ready();
      const config = loaded;
      if (loadedOrStopped.stopped !== undefined) {
        await closeConfig(config, warn, (error) => printable(config, env, error));
        return STOP_SIGNALS[loadedOrStopped.stopped];
      }
      let closed: boolean;
      let code: number;
      try {
        code = await audit(config, only, json, output.report, warn, unhandled, stop);
      } finally {
        closed = await closeConfig(config, warn, (error) => printable(config, env, error));
      }
      // The checks' verdict stands; a close() that failed (what it started may be left running), or an
      // error of your code while it ran, fails a run that passed.
      return code === 0 && (unhandled.count() > 0 || !closed) ? 2 : code;
    } catch (error) {
      // Your configuration's failure (its function of env, its options) is said as every other line
      // of the command is: the dispatcher would print it with whole environment secrets alone removed.
      throw isUsageError(error)
        ? error
        : new Error(printableText(loaded, env, describeQuotingError(error) ?? messageOf(error)));
    } finally {
      stop.dispose();
      // Run by the bin (standard output its own), the command owns the process until it exits: a
      // later error of your code would otherwise end it with Node's stack and the error's message.
      if (write === undefined) {
        unhandled.outlive(() => {
          if (!process.exitCode) process.exitCode = 2;
        });
      } else {
        unhandled.dispose();
      }
      output.restore();
    }
  },
};

/** Whether the command refused its arguments; a value `instanceof` throws on (a revoked Proxy) did not. */
function isUsageError(error: unknown): boolean {
  try {
    return error instanceof UsageError;
  } catch {
    return false;
  }
}

/**
 * `error` as a line of standard error may show it: no client secret in any spelling, no URL's
 * password, no number the audit typed nor any other in full, cut.
 */
function printable(config: AuditConfig | undefined, env: CommandEnv, error: unknown): string {
  return printableText(config, env, describeQuotingError(error) ?? describeThrown(error));
}

/** `text` as standard error may show it: no client secret in any spelling, no URL's password, no number in full, cut. */
function printableText(config: AuditConfig | undefined, env: CommandEnv, text: string): string {
  const clean = withoutEnvironmentSecrets(env, config === undefined ? text : scrubbed(config, text));
  // Your app's error may quote the number the audit typed, or a user's own in any form: masked, as in the report.
  return cutForPrinting(maskEveryNumber(maskTypedRange(withoutUrlPasswords(clean))));
}

/** What ended the command, as the dispatcher says it: the error's message (a list of problems keeps its lines). */
function messageOf(error: unknown): string {
  try {
    if (error instanceof Error) return String(error.message);
  } catch {
    // A value `instanceof` throws on (a revoked Proxy) is described below.
  }
  return describeThrown(error);
}

/** `text` without the environment's secrets (a client secret, a database password, a token) in any spelling. */
function withoutEnvironmentSecrets(env: CommandEnv, text: string): string {
  return environmentSecrets(env)
    .filter((secret) => secret.length >= MIN_OTHER_SECRET_LENGTH)
    .reduce((out, secret) => scrubSecret(secretForms('', secret), out), text);
}

/**
 * The configuration, loaded; or, when SIGINT or SIGTERM came first, said at once, then waited for
 * (a second signal ends the process) so its close() can stop what it started: `stopped` names the
 * signal, and a configuration that then fails to load leaves only the signal's exit code.
 */
async function loadUnlessStopped(
  file: string,
  env: CommandEnv,
  stop: StopWatch,
  warn: (text: string) => void,
): Promise<{ config: AuditConfig; stopped?: StopSignal } | number> {
  const loading = loadConfig(file, env);
  // Stopped, its failure is nobody's.
  loading.catch(() => {});
  const first = await Promise.race([loading, stop.received]);
  if (typeof first !== 'string') return { config: first };
  stop.dispose();
  warn(
    `the audit was stopped (${first}) while your configuration loaded: no report; closing what it started once it has loaded (again to end at once)\n`,
  );
  const config = await loading.catch(() => undefined);
  return config === undefined ? STOP_SIGNALS[first] : { config, stopped: first };
}

/** Runs the audit the configuration describes, prints its report, and closes what the configuration started. */
async function audit(
  config: AuditConfig,
  only: string[] | undefined,
  json: boolean,
  write: (text: string) => void,
  warn: (text: string) => void,
  unhandled: UnhandledErrors,
  stop: StopWatch,
): Promise<number> {
  try {
    // close() is the configuration's, not an option of the audit.
    const { close: _close, ...options } = config;
    const auditing = auditIntegration({ ...options, ...(only === undefined ? {} : { only }) });
    // Stopped, its checks' failures are nobody's.
    auditing.catch(() => {});
    const outcome = await Promise.race([auditing, stop.received]);
    if (typeof outcome === 'string') {
      warn(
        `the audit was stopped (${outcome}) before it finished: no report; closing what your configuration started\n`,
      );
      return STOP_SIGNALS[outcome];
    }
    write(`${json ? formatAuditJson(outcome) : formatAuditTable(outcome)}\n`);
    if (unhandled.count() > 0) {
      warn(
        `${unhandled.count()} error(s) of your code went unhandled while the audit ran (said above): a failed audit\n`,
      );
    }
    // Stopped before its checks, the audit found nothing of the app: the setup is what to fix.
    if (outcome.stopped !== undefined) return 1;
    // Nothing checked is no pass: the checks chosen need options not given (or hosts not reached).
    const nothingRan = noCheckRan(outcome);
    if (nothingRan !== undefined) {
      warn(`${nothingRan}\n`);
      return 1;
    }
    return outcome.ok && unhandled.count() === 0 ? 0 : 2;
  } finally {
    // A second signal while closing ends the process at once, as a shell user expects.
    stop.dispose();
  }
}
