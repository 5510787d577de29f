/**
 * The `hosted-sms-verify-kit <command> [options]` dispatcher. Each command is its own module,
 * loaded only when it runs (the emulator's devDependencies are never needed by `sweep`); a new
 * command is one line in COMMANDS.
 */
import { readFileSync } from 'node:fs';
import { environmentSecrets, redactSecretFragments } from '../middleware/errors.ts';
import { cutForPrinting, describeQuotingError, withoutUrlPasswords } from '../middleware/printable-errors.ts';
import { describeError } from '../middleware/logger.ts';
import type { Command, CommandEnv, CommandOutput } from './command.ts';

const COMMANDS: Record<string, { summary: string; load: () => Promise<{ command: Command }> }> = {
  sweep: { summary: 'fulfil verifications nobody landed (cron, a timer, a CronJob)', load: () => import('./sweep.ts') },
  emulator: { summary: 'run the service emulator for local development', load: () => import('./emulator.ts') },
  fraud: {
    summary: 'SMS pumping: what trips, the decisions; block or release a country or number block',
    load: () => import('./fraud.ts'),
  },
  audit: {
    summary: 'attack your own app, wired to the emulator, and report each check',
    load: () => import('../testing/audit/command.ts'),
  },
};

const USAGE = [
  'usage: hosted-sms-verify-kit <command> [options]   (--help after a command for its options)',
  ...Object.entries(COMMANDS).map(([name, { summary }]) => `  ${name.padEnd(10)} ${summary}`),
  `  ${'--version'.padEnd(10)} print the version of this package (also -v)`,
].join('\n');

/**
 * The version in the package's own package.json: the nearest one named hosted-sms-verify-kit above
 * this module (dist/cli/ as installed, cli/ in the repository), never the integrator's in the cwd.
 */
function packageVersion(): string | undefined {
  for (const up of ['../', '../../']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(`${up}package.json`, import.meta.url), 'utf8')) as unknown;
      if (typeof manifest !== 'object' || manifest === null) continue;
      const { name, version } = manifest as { name?: unknown; version?: unknown };
      if (name === 'hosted-sms-verify-kit' && typeof version === 'string') return version;
    } catch {
      // None there, or not JSON: look one level up.
    }
  }
  return undefined;
}

/** Whether a command refused its arguments; a value `instanceof` throws on (a revoked Proxy) did not. */
function isUsageError(error: unknown): boolean {
  try {
    return error instanceof Error && error.name === 'UsageError';
  } catch {
    return false;
  }
}

/**
 * An unknown command as its refusal quotes it: a word, as a misspelt command is. Anything else (a
 * value whose flag was left out, a secret pasted where the command goes, megabytes) is not quoted.
 */
function quotedCommand(name: string, env: CommandEnv): string {
  const word = /^-{0,2}[a-z][a-z-]{0,19}$/i.test(name) && redactSecretFragments(name, environmentSecrets(env)) === name;
  return word ? `"${name}"` : '(the first argument, not shown: a command is a word, such as sweep)';
}

/**
 * Runs the command `argv` names; resolves with the exit code, never exits. What it prints goes to
 * `output` when given (a command that takes it prints there too), else to the process's streams.
 */
export async function runCli(argv: readonly string[], env: CommandEnv, output?: CommandOutput): Promise<number> {
  const write = output?.write ?? ((text: string) => process.stdout.write(text));
  const warn = output?.warn ?? ((text: string) => process.stderr.write(text));
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    write(`${USAGE}\n`);
    return name === undefined ? 1 : 0;
  }
  if (name === '--version' || name === '-v') {
    const version = packageVersion();
    if (version === undefined) {
      warn("hosted-sms-verify-kit: the package's package.json, next to dist/, was not found.\n");
      return 1;
    }
    write(`${version}\n`);
    return 0;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (entry === undefined) {
    warn(`Unknown command ${quotedCommand(name, env)}.\n${USAGE}\n`);
    return 1;
  }
  const { command } = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    write(`${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest, env, output?.write, output?.warn);
  } catch (error) {
    // A person reads this: the message and how to fix it, never a stack trace, never a secret
    // (a configuration's own code may quote one it read from the environment, or, pasted without
    // its quotes, the secret is a name a ReferenceError quotes), never a database URL's password;
    // cut once redacted: an error of megabytes is no line a log keeps whole.
    const message = cutForPrinting(
      withoutUrlPasswords(
        redactSecretFragments(
          describeQuotingError(error) ?? String(describeError(error).message),
          environmentSecrets(env),
        ),
      ),
    );
    const usage = isUsageError(error) ? `\n${command.usage}` : '';
    warn(`hosted-sms-verify-kit ${name}: ${message}${usage}\n`);
    return 1;
  }
}
