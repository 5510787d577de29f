/**
 * While the audit command runs, your app (started by your configuration, in the same process) is
 * attacked with forged input: a handler of yours that throws or rejects where nothing handles it
 * (an Express 4 async handler, a promise left floating) would end the command with Node's stack
 * trace, the error's message (which may quote the client secret) and no report. Each is said
 * instead, as one line without the secret, and the command goes on; it then exits as a failed audit
 * (in production each would end your app).
 */

/** The most such lines said; the rest are counted. */
const MOST_SAID = 10;

export interface UnhandledErrors {
  /** How many reached the process since `watchUnhandled`. */
  readonly count: () => number;
  /** Stops listening (Node's defaults apply again); says how many were not printed. */
  readonly dispose: () => void;
  /**
   * Keeps listening once the command has answered, for the process it owns until it exits (a
   * promise your close() left rejects later): each is said as before and `then` runs.
   */
  readonly outlive: (then: () => void) => void;
}

/**
 * Listens for what nobody handled: each is written with `warn` as one line, `describe` making the
 * error printable (no secret, no URL password, cut).
 */
export function watchUnhandled(warn: (text: string) => void, describe: (error: unknown) => string): UnhandledErrors {
  let count = 0;
  let late: (() => void) | undefined;
  const say = (how: string) => (error: unknown) => {
    count += 1;
    try {
      late?.();
    } catch {
      // Said all the same.
    }
    if (count > MOST_SAID) return;
    let text: string;
    try {
      text = describe(error);
    } catch {
      text = 'a value that cannot be read';
    }
    warn(`your code ${how}, and nothing handled it (in production this ends your app): ${text}\n`);
  };
  const onRejection = say('rejected');
  const onException = say('threw');
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  const unsaid = () => {
    if (count > MOST_SAID) warn(`... and ${count - MOST_SAID} more such errors of your code\n`);
  };
  return {
    count: () => count,
    dispose: () => {
      process.removeListener('unhandledRejection', onRejection);
      process.removeListener('uncaughtException', onException);
      unsaid();
    },
    outlive: (then) => {
      unsaid();
      late = then;
    },
  };
}
