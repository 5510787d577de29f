/** What every `hosted-sms-verify-kit` command module exports: one `command`. */

/** The environment a command reads its settings from. */
export type CommandEnv = Readonly<Record<string, string | undefined>>;

export interface Command {
  /** One line for the command list. */
  summary: string;
  /** The command's usage, printed on --help and on a usage error. */
  usage: string;
  /** Runs the command; resolves with the process's exit code (it never calls process.exit). */
  run(argv: readonly string[], env: CommandEnv): Promise<number>;
}

/** A usage mistake: printed with the command's usage, exit code 1, no stack trace. */
export class UsageError extends Error {
  override name = 'UsageError';
}
