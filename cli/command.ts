/** What every `hosted-sms-verify-kit` command module exports: one `command`. */

/** The environment a command reads its settings from. */
export type CommandEnv = Readonly<Record<string, string | undefined>>;

/** Where a command prints: `write` its standard output, `warn` its standard error. */
export interface CommandOutput {
  write(text: string): void;
  warn(text: string): void;
}

export interface Command {
  /** One line for the command list. */
  summary: string;
  /** The command's usage, printed on --help and on a usage error. */
  usage: string;
  /**
   * Runs the command; resolves with the process's exit code (it never calls process.exit). `write`
   * and `warn` take what it prints (`fraud` and `audit`; the process's streams when not given);
   * `sweep` and `emulator` print to the process's streams.
   */
  run(
    argv: readonly string[],
    env: CommandEnv,
    write?: CommandOutput['write'],
    warn?: CommandOutput['warn'],
  ): Promise<number>;
}

/** A usage mistake: printed with the command's usage, exit code 1, no stack trace. */
export class UsageError extends Error {
  override name = 'UsageError';
}
