/**
 * While the sweep job owns its process, the configuration's code runs in it: a promise a fulfil or
 * an onOutcome set off and left floating, a timer of its own that throws. Nothing handles those, so
 * Node would end the job with its stack trace and the error's message (which may quote the client
 * secret), the claims left to lapse. Each is said instead, as one line without a stack, and the job
 * goes on; run by the command, until its process exits, the command's exit grace included.
 */
import { describeError } from '../logger.ts';
import { describeQuotingError } from '../printable-errors.ts';

/** How an error reached the process: a promise nobody handled, or a throw nothing caught. */
export type UnhandledHow = 'rejected' | 'threw';

export interface UnhandledErrorLine {
  /** Undefined in the last line, which only counts the errors not said. */
  how: UnhandledHow | undefined;
  /**
   * The error; 'not shown' when it came before the kit was built and the job ended without one
   * (its client secret never became known to the redaction).
   */
  error: { value: unknown } | 'not shown' | undefined;
  /** Errors not said before this line (more than MOST_SAID_A_MINUTE in a minute). */
  unsaid: number;
  /** It came after the job returned, while its process was about to exit. */
  afterJob: boolean;
}

export interface UnhandledErrorWatch {
  /** The kit is built (its client secret is known to the redaction): held errors are said now. */
  ready(): void;
  /** Stops listening (Node's defaults apply again); says what is still held or unsaid. */
  dispose(): void;
  /**
   * The job returned and its process exits in a moment (the command's exit grace): errors are said
   * as before until then, held ones now (not shown), the count of those unsaid at the exit.
   */
  keepUntilExit(): void;
}

/** A configuration failing in a tight loop must not flood the log: the rest are counted. */
const MOST_SAID_A_MINUTE = 10;

/** Whether one more line fits in the current minute. */
function linesAMinute(): () => boolean {
  let minuteStartedAt = 0;
  let saidThisMinute = 0;
  return () => {
    const now = Date.now();
    if (now - minuteStartedAt >= 60_000) {
      minuteStartedAt = now;
      saidThisMinute = 0;
    }
    if (saidThisMinute >= MOST_SAID_A_MINUTE) return false;
    saidThisMinute++;
    return true;
  };
}

export function watchUnhandledErrors(say: (line: UnhandledErrorLine) => void): UnhandledErrorWatch {
  let isReady = false;
  let afterJob = false;
  const held: { how: UnhandledHow; value: unknown }[] = [];
  const fitsThisMinute = linesAMinute();
  let unsaid = 0;
  const sayNow = (how: UnhandledHow | undefined, error: UnhandledErrorLine['error']) => {
    try {
      say({ how, error, unsaid, afterJob });
      unsaid = 0;
    } catch {
      // Nowhere left to say it.
    }
  };
  const heard = (how: UnhandledHow) => (value: unknown) => {
    if (!isReady && !afterJob) {
      if (held.length < MOST_SAID_A_MINUTE) held.push({ how, value });
      else unsaid++;
      return;
    }
    if (!fitsThisMinute()) {
      unsaid++;
      return;
    }
    // After a job that never built its kit: never with a secret the redaction could not know.
    sayNow(how, isReady ? { value } : 'not shown');
  };
  const onRejection = heard('rejected');
  const onException = heard('threw');
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  const sayHeldAndUnsaid = () => {
    for (const { how } of held.splice(0)) sayNow(how, 'not shown');
    if (unsaid > 0) sayNow(undefined, undefined);
  };
  return {
    ready() {
      isReady = true;
      for (const { how, value } of held.splice(0)) sayNow(how, { value });
    },
    dispose() {
      process.removeListener('unhandledRejection', onRejection);
      process.removeListener('uncaughtException', onException);
      sayHeldAndUnsaid();
    },
    keepUntilExit() {
      for (const { how } of held.splice(0)) sayNow(how, 'not shown');
      afterJob = true;
      process.once('exit', sayHeldAndUnsaid);
    },
  };
}

/** The job's line for one: what happened and the error as the job's other lines describe one, no stack. */
export function unhandledErrorEvent({ how, error, unsaid, afterJob }: UnhandledErrorLine): Record<string, unknown> {
  const counted = unsaid > 0 ? { unsaid } : {};
  if (how === undefined) {
    return {
      event: 'sweep_unhandled_error',
      message: `${unsaid} more errors of the configuration's code nothing handled`,
    };
  }
  const described =
    error === 'not shown' || error === undefined
      ? { message: 'not shown: it came before the kit was built, so its client secret is not known to be hidden' }
      : describeValue(error.value);
  return {
    event: 'sweep_unhandled_error',
    message: afterJob
      ? `the configuration's code ${how} after the job ended and nothing handled it; the process exits with the job's code`
      : `the configuration's code ${how} and nothing handled it; the job goes on (in your app this ends the process)`,
    error: described,
    ...counted,
  };
}

function describeValue(value: unknown): Record<string, unknown> {
  const quoting = describeQuotingError(value);
  return quoting === undefined ? describeError(value) : { message: quoting };
}
