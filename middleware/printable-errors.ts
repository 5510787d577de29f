/**
 * What a command may print of an error: not the message of one that quotes the code it stopped at,
 * no URL's password, and no argument it does not take that may be a secret or a phone number. A
 * leaf but for two leaves (the secret's length, what may be a phone number): the commands, the
 * sweep job and the audit share it.
 */
import { quotedUnlessNumber } from './numbers/mask-number.ts';
import { MIN_SECRET_LENGTH } from './secret-spellings.ts';

/** Errors whose message quotes the text they stopped at: a token, a name, the start of a JSON text. */
const QUOTING = new Set(['SyntaxError', 'ReferenceError']);

/** The first frame of a stack in a file (not in node's own modules): `file:///app/verify.config.mjs:2:16`. */
const FRAME_IN_A_FILE = /^\s+at (?:[^\n]*?\()?((?:file:\/\/|\/|[A-Za-z]:\\)[^\s()]*:\d+:\d+)\)?$/m;

/**
 * What a command prints for an error whose message quotes the code's own text (a secret pasted
 * without its quotes is a name that is not defined; JSON.parse quotes what it could not read):
 * its kind and where, never its message. Undefined for any other error. Never throws.
 */
export function describeQuotingError(error: unknown): string | undefined {
  try {
    if (!(error instanceof Error) || !QUOTING.has(error.name)) return undefined;
    const where = typeof error.stack === 'string' ? FRAME_IN_A_FILE.exec(error.stack)?.[1] : undefined;
    const why = 'its message is not shown, as it quotes the text of the code (which may hold a secret)';
    return where === undefined
      ? `${error.name} in the configuration module: ${why}; \`node --check\` on the module shows where.`
      : `${error.name} at ${where}: ${why}.`;
  } catch {
    return undefined;
  }
}

/**
 * A URL's userinfo with a password: `postgres://app:PASSWORD@`, up to the last "@" of the URL (a
 * password pasted without percent-encoding may hold "/", "?", "#" or "@" itself), never past a
 * space, a quote or a bracket (a JSON line's next field, an attribute's end).
 */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*:)([^\s"'<>`]*)@/gi;

/** After `host:`: a port and then the path, whose "@" (a query's e-mail address) is no userinfo. */
const PORT_THEN_PATH = /^\d+[/?#]/;

/**
 * `text` with the password of every URL in it replaced (`postgres://app:[redacted]@db:5432/app`):
 * a configuration's database URL carries one, and an error quoting the URL would show it.
 */
export function withoutUrlPasswords(text: string): string {
  return text.replace(URL_PASSWORD, (whole: string, head: string, rest: string) =>
    PORT_THEN_PATH.test(rest) ? whole : `${head}[redacted]@`,
  );
}

/** The most a command prints of one text: an error of megabytes would be a line no log keeps whole. */
export const MAX_PRINTED_TEXT = 2_000;

/**
 * `text` cut to `max` characters, saying how many were left out. Only text already redacted may be
 * cut: a secret cut in two escapes a redaction that looks for it whole.
 */
export function cutForPrinting(text: string, max = MAX_PRINTED_TEXT): string {
  if (text.length <= max) return text;
  // Never half of a character outside the Basic Multilingual Plane.
  const code = text.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

/** What a refusal says in place of an argument that may be a client secret pasted on the command line. */
export const NOT_REPEATED_SECRET = 'a value not repeated here, as it may be a secret';

/**
 * An argument a command does not take, as its refusal quotes it: an option's name, never a value
 * given with it. The arguments are read before the configuration, so no redaction knows the client
 * secret yet: `--block=+447400123456` and `--client-secret=<secret>` are unknown options too.
 * Anything but a name is quoted only when shorter than a secret, and unless it may hold a number.
 * `takes`: the flags the command takes, told to give their value after a space.
 */
export function shownArgument(arg: string, takes: ReadonlySet<string> = new Set()): string {
  const equals = arg.indexOf('=');
  const name = equals === -1 ? arg : arg.slice(0, equals);
  if (/^--?[a-z][a-z-]{0,30}$/i.test(name)) {
    if (equals === -1) return `"${name}"`;
    const taken = takes.has(name) ? `: give ${name} its value after a space` : '';
    return `"${name}=" (its value not repeated)${taken}`;
  }
  return arg.length < MIN_SECRET_LENGTH ? quotedUnlessNumber(arg) : NOT_REPEATED_SECRET;
}

/** A module's file name as written: it ends in a module's or JSON's extension. */
const MODULE_FILE = /\.(?:[cm]?js|[cm]?ts|json)$/i;

/**
 * The refusal of a `--config` (or its variable) naming no file that is there. The flags are read
 * before anything knows a secret to hide: the value is quoted back only when it is written as a
 * module's file name (a secret pasted there is not).
 */
export function noSuchConfigFile(file: string, path: string): string {
  return MODULE_FILE.test(file)
    ? `--config ${file}: no such file (looked at ${path}).`
    : '--config: no such file (the value given is not shown: name a module by its file, e.g. --config ./verify.config.js).';
}
