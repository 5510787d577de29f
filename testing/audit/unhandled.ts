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
  /**
   * `describe` can now remove the secret (the configuration naming it has loaded): the errors held
   * until then are said, and the later ones as they come.
   */
  readonly ready: () => void;
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
 * error printable (no secret, no URL password, cut). Until `ready()`, `describe` may not know the
 * secret yet: the errors are held, and said without their message if it never comes.
 */
export function watchUnhandled(warn: (text: string) => void, describe: (error: unknown) => string): UnhandledErrors {
  let count = 0;
  let late: (() => void) | undefined;
  let isReady = false;
  const held: { how: string; error: unknown }[] = [];
  const line = (how: string, text: string) =>
    warn(`your code ${how}, and nothing handled it (in production this ends your app): ${text}\n`);
  const sayNow = (how: string, error: unknown) => {
    let text: string;
    try {
      text = describe(error);
    } catch {
      text = 'a value that cannot be read';
    }
    line(how, text);
  };
  // Never said with a secret `describe` could not yet remove.
  const sayHeld = () => {
    for (const { how } of held.splice(0)) {
      line(how, 'its message is not shown: the configuration did not load, so its client secret is not known');
    }
  };
  const say = (how: string) => (error: unknown) => {
    count += 1;
    try {
      late?.();
    } catch {
      // Said all the same.
    }
    if (count > MOST_SAID) return;
    if (isReady) sayNow(how, error);
    else held.push({ how, error });
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
    ready: () => {
      isReady = true;
      for (const { how, error } of held.splice(0)) sayNow(how, error);
    },
    dispose: () => {
      process.removeListener('unhandledRejection', onRejection);
      process.removeListener('uncaughtException', onException);
      sayHeld();
      unsaid();
    },
    outlive: (then) => {
      sayHeld();
      unsaid();
      late = then;
    },
  };
}
