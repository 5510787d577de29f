/**
 * `hosted-sms-verify-kit emulator [--port N] [--clients FILE]`: the service's emulator for local
 * development, on loopback, until SIGINT/SIGTERM. It says where it listens, which clients are
 * registered and where the SMS inbox is; it never prints a client secret. Needs the devDependencies
 * `helmet` and `@simplewebauthn/server`.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  DEFAULT_CLIENT,
  DEFAULT_PAGE_HOST,
  loadEnvConfig,
  parseControl,
  parseClientsJson,
  parsePort,
  validatePageHost,
  type EmulatorClient,
} from '../emulator/config/config.ts';
import { startEmulator } from '../emulator/index.ts';
import { MIN_SECRET_LENGTH } from '../middleware/errors.ts';
import { flagGivenTwice } from '../middleware/options/command-flags.ts';
import { NOT_REPEATED_SECRET } from '../middleware/printable-errors.ts';
import { UsageError, type Command, type CommandEnv } from './command.ts';

const USAGE = `usage: hosted-sms-verify-kit emulator [--port N] [--clients FILE] [--page-host NAME] [--control on|off]
  --port N          port on 127.0.0.1 (env EMULATOR_PORT; default 4010; 0 picks a free one)
  --clients FILE    JSON array of registered clients [{"clientId","secret","returnUrl","platform"?}]
                    (env EMULATOR_CLIENTS holds the JSON itself; default: one client "demo-client"
                    returning to http://localhost:3000/verify/return)
  --page-host NAME  host name of the hosted page (env EMULATOR_PAGE_HOST; default verify.localhost, where passkeys work)
  --control on|off  the loopback-only control API and SMS inbox (env EMULATOR_CONTROL; default on)`;

interface EmulatorSettings {
  port: number;
  clients: EmulatorClient[];
  control: boolean;
  pageHost: string;
  clientsFrom: string;
}

function readClients(file: string): EmulatorClient[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--clients ${file}: cannot read it (${(error as Error).message}).`);
  }
  try {
    return parseClientsJson(text, `--clients ${file}`);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The variables the command reads a port, a switch, a host or a rate from: a secret may be pasted there too. */
const SETTING_VARIABLES = [
  'EMULATOR_PORT',
  'EMULATOR_CONTROL',
  'EMULATOR_PAGE_HOST',
  'EMULATOR_STATUS_READS_PER_SECOND',
  'EMULATOR_CREATES_PER_SECOND',
] as const;

/** A file name as written: a path (`./clients.json`, `conf/clients`) or a `.json` file. A secret is neither. */
const FILE_NAME = /[\\/]|\.json$/i;

/**
 * The file names given to `--clients`: its own refusal names the file it could not read. Only one
 * written as a file name: a secret pasted there is not repeated.
 */
function clientsFiles(argv: readonly string[]): string[] {
  return argv
    .flatMap((arg, i) =>
      arg === '--clients' ? [argv[i + 1] ?? ''] : arg.startsWith('--clients=') ? [arg.slice('--clients='.length)] : [],
    )
    .filter((file) => FILE_NAME.test(file));
}

/**
 * The texts of `argv` and of the setting variables that may be a client secret pasted there: the
 * flags are read before anything knows a secret to hide. A flag's name is its own, and a file name
 * is what `--clients` takes; anything else as long as a secret is not repeated, one holding a dot
 * too (a secret may hold one, as a host name does).
 */
function pastedSecrets(argv: readonly string[], env: CommandEnv): string[] {
  const files = new Set(clientsFiles(argv));
  const fromEnv = SETTING_VARIABLES.flatMap((name) => {
    const value = env[name];
    return value === undefined ? [] : [value, value.trim()];
  });
  return [...argv, ...fromEnv]
    .flatMap((arg) => (/^--?[a-z][a-z-]*=/i.test(arg) ? [arg, arg.slice(arg.indexOf('=') + 1)] : [arg]))
    .filter((text) => text.length >= MIN_SECRET_LENGTH && !/^--?[a-z][a-z-]*$/i.test(text) && !files.has(text))
    .sort((a, b) => b.length - a.length);
}

/** Flags first, then EMULATOR_* variables, then the defaults; a refusal never repeats what may be a secret. */
function settingsOf(argv: readonly string[], env: CommandEnv): EmulatorSettings {
  try {
    return readSettings(argv, env);
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    for (const text of pastedSecrets(argv, env)) {
      for (const shown of [`"${text}"`, `'${text}'`, text]) {
        error.message = error.message.replaceAll(shown, NOT_REPEATED_SECRET);
      }
    }
    throw error;
  }
}

function readSettings(argv: readonly string[], env: CommandEnv): EmulatorSettings {
  // Node's parser keeps the last of a flag given twice: the operator meant one of them, unsaid which.
  const twice = flagGivenTwice(argv, ['--port', '--clients', '--page-host', '--control']);
  if (twice !== undefined) throw new UsageError(twice);
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        clients: { type: 'string' },
        'page-host': { type: 'string' },
        control: { type: 'string' },
      },
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  // `--port=$PORT` with PORT unset: the operator meant a value, so no default stands in for it.
  const blank = Object.entries(values).find(([, value]) => value !== undefined && value.trim() === '');
  if (blank !== undefined) throw new UsageError(`--${blank[0]} was given no value; give one, or leave the flag out.`);
  const fromEnv = loadEnvConfig(env as NodeJS.ProcessEnv);
  const clientsFile = values.clients;
  return {
    // A flag's mistake is named by the flag.
    port: values.port === undefined ? fromEnv.port : parsePort(values.port, '--port'),
    clients: clientsFile === undefined ? fromEnv.clients : readClients(clientsFile),
    control: values.control === undefined ? fromEnv.control : parseControl(values.control, '--control'),
    pageHost:
      values['page-host'] === undefined
        ? (fromEnv.pageHost ?? DEFAULT_PAGE_HOST)
        : validatePageHost(values['page-host'], '--page-host'),
    clientsFrom:
      clientsFile !== undefined ? `as set in ${clientsFile}` : env.EMULATOR_CLIENTS ? 'as set in EMULATOR_CLIENTS' : '',
  };
}

/** Where the integrator reads the built-in test client's secret: the command prints no secret, not even this public one. */
const BUILT_IN_SECRET_SOURCE =
  'the built-in test client\'s, in the kit\'s emulator/README.md ("The built-in test client")';

/**
 * The built-in test client's values to paste into the app's .env, all but its secret: only when
 * it is the one registered.
 */
function builtInClientEnv(settings: EmulatorSettings, url: string): string[] {
  const [only] = settings.clients;
  const builtIn = settings.clientsFrom === '' && settings.clients.length === 1 && only === DEFAULT_CLIENT;
  if (!builtIn) return [];
  return [
    "  The built-in test client. Paste into your app's .env (then: node --env-file=.env server.mjs):",
    `    VERIFY_BASE_URL=${url}`,
    `    VERIFY_CLIENT_ID=${DEFAULT_CLIENT.clientId}`,
    `    VERIFY_RETURN_URL=${DEFAULT_CLIENT.returnUrl}`,
    `  and set VERIFY_CLIENT_SECRET to ${BUILT_IN_SECRET_SOURCE}.`,
  ];
}

function banner(settings: EmulatorSettings, url: string, pageOrigin: string): string {
  // No secret is printed: say where it is configured instead.
  const secretSource = settings.clientsFrom || BUILT_IN_SECRET_SOURCE;
  return [
    `Hosted SMS verification emulator listening on ${url}`,
    `  POST ${url}/session · GET ${url}/session/{id} · verifyUrl ${pageOrigin}/verify`,
    ...settings.clients.map(
      (client) =>
        `  client ${client.clientId} · secret ${secretSource} · returnUrl ${client.returnUrl} (${client.platform ?? 'web'})`,
    ),
    ...builtInClientEnv(settings, url),
    settings.control
      ? `  SMS inbox: ${url}/_dev/inbox\n  Control API: on at ${url}/_control (loopback only)`
      : '  Control API and inbox: off (production-like); SMS codes are printed here only.',
    '  Press Ctrl+C to stop.',
  ].join('\n');
}

export const command: Command = {
  summary: 'run the service emulator for local development',
  usage: USAGE,
  async run(argv, env) {
    const settings = settingsOf(argv, env);
    // Each text's line (its number masked by the emulator) on console.log, the default.
    const emulator = await startEmulator(settings);
    // Listen for signals before the banner: whoever waits for it may signal at once.
    const stopSignal = new Promise<string>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    process.stdout.write(`${banner(settings, emulator.url, emulator.pageOrigin)}\n`);
    const signal = await stopSignal;
    process.stdout.write(`\n${signal}: stopping the emulator.\n`);
    await emulator.close();
    return 0;
  },
};
