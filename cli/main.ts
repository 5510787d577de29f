#!/usr/bin/env node
/**
 * `hosted-sms-verify-kit <command> [options]`: a dispatcher. Each command is its own module,
 * loaded only when it runs (the emulator's devDependencies are never needed by `sweep`); a new
 * command is one line in COMMANDS.
 */
import { readFileSync } from 'node:fs';
import { environmentSecrets, redactSecretFragments, redactSecrets } from '../middleware/errors.ts';
import { cutForPrinting, describeQuotingError, withoutUrlPasswords } from '../middleware/printable-errors.ts';
import { describeError } from '../middleware/logger.ts';
import type { Command } from './command.ts';

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

/** How long a finished command waits for its output to drain before it exits whatever is still open. */
const EXIT_GRACE_MS = 2_000;

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
function quotedCommand(name: string): string {
  const word = /^-{0,2}[a-z][a-z-]{0,19}$/i.test(name) && redactSecrets(name, environmentSecrets(process.env)) === name;
  return word ? `"${name}"` : '(the first argument, not shown: a command is a word, such as sweep)';
}

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return name === undefined ? 1 : 0;
  }
  if (name === '--version' || name === '-v') {
    const version = packageVersion();
    if (version === undefined) {
      process.stderr.write("hosted-sms-verify-kit: the package's package.json, next to dist/, was not found.\n");
      return 1;
    }
    process.stdout.write(`${version}\n`);
    return 0;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (entry === undefined) {
    process.stderr.write(`Unknown command ${quotedCommand(name)}.\n${USAGE}\n`);
    return 1;
  }
  const { command } = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest, process.env);
  } catch (error) {
    // A person reads this: the message and how to fix it, never a stack trace, never a secret
    // (a configuration's own code may quote one it read from the environment, or, pasted without
    // its quotes, the secret is a name a ReferenceError quotes), never a database URL's password;
    // cut once redacted: an error of megabytes is no line a log keeps whole.
    const message = cutForPrinting(
      withoutUrlPasswords(
        redactSecretFragments(
          describeQuotingError(error) ?? String(describeError(error).message),
          environmentSecrets(process.env),
        ),
      ),
    );
    const usage = isUsageError(error) ? `\n${command.usage}` : '';
    process.stderr.write(`hosted-sms-verify-kit ${name}: ${message}${usage}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
// The command is done: a handle a configuration left open (a timer, a socket, a pool it never
// ended) must not keep a scheduled job running into the next one. Its output gets a moment to drain.
setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
