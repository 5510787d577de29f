/**
 * Hands a request to the integrator's own Express handler (a step-up guard's `onUnenrolled`). It is
 * outside the kit's trust for liveness: one that throws or rejects is answered with the kit's error
 * page, and one that neither answers nor calls `next()` within `ms` (an enrolment service that
 * never replies, a callback that never fires) gets the kit's error page then, so no user's request
 * stays open; one that began its answer and has not ended it then is cut off. What it writes once
 * the kit answered in its place (at its deadline, or for its failure) is dropped: a late
 * `res.redirect` in its own timer would otherwise throw where nothing catches it and end the
 * process. A later `next()` is dropped too (after its deadline, or after it failed): the guarded
 * handler never runs after the user got the error page, nor after the handler's own answer; and a
 * second `next()` is dropped, so the guarded handler runs once and its answer is the user's.
 * An error it passes to `next(err)` is answered as a throw is. A throw or rejection once the request
 * was answered, or handed on with `next()`, is only logged.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { runDetached } from '../deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { thrownByIntegratorCode } from '../logger.ts';

export function handOverWithin(
  name: string,
  ms: number,
  handler: RequestHandler,
  exchange: { req: Request; res: Response; next: NextFunction },
  failed: { answer(error: unknown): void; afterAnswer(error: unknown): void },
): void {
  const { req, res, next } = exchange;
  let passedOn = false;
  // The kit answered in its place (at its deadline, or for its failure): what it does later counts for nothing.
  let answeredForIt = false;
  const answerInItsPlace = (): void => {
    answeredForIt = true;
    // A callback it set off may still answer (a redirect once a lookup replies): dropped, never thrown.
    dropWritesOnceAnswered(res);
  };
  const endAsked = watchEnd(res);
  // Answered in its place after it began its own answer: one it never ended is cut off, as Express
  // does at a failure: the user's request must not stay open for good.
  const cutOff = (error: unknown): void => {
    answerInItsPlace();
    failed.afterAnswer(error);
    if (!endAsked()) res.destroy();
  };
  const timer = setTimeout(() => {
    if (passedOn) return;
    if (res.headersSent) {
      if (endAsked()) return;
      // An answer begun and never ended: a template waiting on a service that never replies.
      cutOff(missedDeadline(name, ms, 'began its answer and did not end it', 'it was cut off'));
      return;
    }
    answerInItsPlace();
    failed.answer(missedDeadline(name, ms, 'neither answered nor called next()', 'it counts as failed'));
  }, ms).unref();
  // Answered, or handed on: nothing left to bound. A client that went away first leaves the
  // deadline standing, so a next() past it runs nothing whether or not anyone still listens.
  res.once('close', () => {
    if (passedOn || endAsked()) clearTimeout(timer);
  });
  /** It threw, rejected or passed an error to next(); a KitError in its words (a number) is logged masked. */
  const failedWith = (error: unknown): void => {
    clearTimeout(timer);
    thrownByIntegratorCode(error);
    // Answered at its deadline, or handed on to the guarded handler: the request is no longer
    // this handler's to answer, and an answer now would race the one already under way.
    if (answeredForIt || passedOn) failed.afterAnswer(error);
    else if (!res.headersSent) {
      answerInItsPlace();
      failed.answer(error);
    } else {
      // Failed with its own answer begun: a later next() must not run the guarded handler either.
      cutOff(error);
    }
  };
  const onward: NextFunction = (error?: unknown) => {
    // Too late: the user was told it failed, so the guarded handler must not run now.
    if (answeredForIt) return;
    // next(err) is how Express middleware fails: answered as a throw is, never handed to Express's
    // error handlers, which print its stack (and whatever its message holds).
    if (isExpressError(error)) return failedWith(error);
    // Handed on already: a second next() would move Express past the guarded handler (its 404)
    // while that handler answers, or run a kept form again. Only logged.
    if (passedOn) return failed.afterAnswer(passedOnTwice(name));
    clearTimeout(timer);
    // It answered (a redirect to enrolment) and passed on too: the guarded handler must not run unverified.
    if (res.headersSent || endAsked()) {
      cutOff(passedOnAfterAnswering(name));
      return;
    }
    passedOn = true;
    next(error);
  };
  runDetached(() => handler(req, res, onward), failedWith);
}

/** A handler that answered and then called next(): logged, the guarded handler not run. */
function passedOnAfterAnswering(name: string): KitError {
  return new KitError(
    KitErrorCode.HookFailed,
    `${name} called next() after it answered; the guarded handler was not run.`,
  );
}

/** A handler that called next() a second time: logged, nothing more run. */
function passedOnTwice(name: string): KitError {
  return new KitError(KitErrorCode.HookFailed, `${name} called next() more than once; the later calls were ignored.`);
}

/** Why the kit answered in a handler's place at its deadline: what it did not do, and what came of it. */
function missedDeadline(name: string, ms: number, missed: string, outcome: string): KitError {
  return new KitError(
    KitErrorCode.HookFailed,
    `${name} ${missed} within ${ms} ms; ${outcome} (raise hookTimeouts.${name} if it needs longer).`,
  );
}

/** An argument of next() Express reads as an error: anything truthy but 'route' and 'router'. */
function isExpressError(error: unknown): boolean {
  return Boolean(error) && error !== 'route' && error !== 'router';
}

/**
 * Whether `res.end` was called. `writableEnded` alone cannot tell: express-session holds the real
 * end back until the session is saved, so an answer on its way out may not have ended yet.
 */
function watchEnd(res: Response): () => boolean {
  let asked = false;
  const { end } = res;
  res.end = function endWatched(this: Response, ...args: unknown[]) {
    asked = true;
    return (end as (...a: unknown[]) => Response).apply(this, args);
  } as Response['end'];
  return () => asked || res.writableEnded;
}

/**
 * Makes the response drop what is written once it is answered (it would throw: headers sent). The
 * kit's error page is sent at once; with `errors: 'next'` the app's own error handler may answer
 * a moment later (after an await), and what comes first goes out: dropping every write from the
 * deadline on would drop that answer too, and the user's request would never end.
 */
function dropWritesOnceAnswered(res: Response): void {
  const { setHeader, appendHeader, removeHeader, writeHead, write, end } = res;
  const unlessHeadersSent =
    <A extends unknown[], R>(method: (...args: A) => R, dropped: () => R) =>
    (...args: A): R =>
      res.headersSent ? dropped() : method.apply(res, args);
  Object.assign(res, {
    setHeader: unlessHeadersSent(setHeader, () => res),
    appendHeader: unlessHeadersSent(appendHeader, () => res),
    removeHeader: unlessHeadersSent(removeHeader, () => undefined),
    writeHead: unlessHeadersSent(writeHead as (...args: unknown[]) => Response, () => res),
    write: (...args: unknown[]) =>
      res.writableEnded ? true : (write as (...a: unknown[]) => boolean).apply(res, args),
    end: (...args: unknown[]) => (res.writableEnded ? res : (end as (...a: unknown[]) => Response).apply(res, args)),
  });
}
