/**
 * Whether a run's status reads reach the service: its report's `serviceReachable`, and the stop of
 * a run whose first reads all go unanswered (the service is down, or refuses the credentials): the
 * rest of the backlog would only spend reads (each retried by the client too) that none can
 * answer. The next run reads them.
 */
import { isKitError, KitErrorCode } from '../errors.ts';

/** Errors that mean the read got no usable answer from the service. */
const UNANSWERED: ReadonlySet<string> = new Set([
  KitErrorCode.ServiceUnavailable,
  KitErrorCode.ServiceProtocolError,
  KitErrorCode.ServiceRejected,
]);

export interface ReadAnswers {
  /** The service answered a read (an answer the kit then refused, another user echoed, is one). */
  answered(): void;
  /** A read failed with `error`; counted as unanswered when it got no usable answer. */
  failed(error: unknown): void;
  /** True once the run's first reads, twice `concurrency` and at least 10, all went unanswered. */
  nothingAnswers(): boolean;
  /** False when reads were made and none got a usable answer. */
  reachable(reads: number): boolean;
}

export function readAnswers(concurrency: number): ReadAnswers {
  const enough = Math.max(10, 2 * concurrency);
  let answered = 0;
  let unanswered = 0;
  return {
    answered: () => {
      answered++;
    },
    failed: (error) => {
      if (isKitError(error) && UNANSWERED.has(error.code)) unanswered++;
      else answered++;
    },
    nothingAnswers: () => answered === 0 && unanswered >= enough,
    reachable: (reads) => !(reads > 0 && unanswered === reads),
  };
}
