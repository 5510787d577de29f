/**
 * What a start that passed the SMS pumping check does with its text: the check counted it (judged
 * or allow-listed), and its send is recorded once the session exists, or the text given back when
 * the start ends before one exists. Every write here waits no longer than a budget's refund and
 * never fails the start.
 */
import { withDeadline } from '../deadline.ts';
import { describeError, lateRejectionLogger, type KitLogger } from '../logger.ts';
import type { PumpingStore } from '../store/types.ts';
import type { StartKeys } from './pumping-keys.ts';

/** What the start does once its session exists, or when it ends before one exists. Neither rejects. */
export interface PumpingPass {
  /** The session exists: its text is counted under the start's keys. */
  sent(sessionId: string): Promise<void>;
  /** The start ended before any session existed (nothing was sent): its text is given back. */
  unsent(): Promise<void>;
}

/** What a pumping store write of a start needs. */
export interface PumpingWriteDeps {
  logger: KitLogger;
  now: () => number;
  /** How long a start's answer waits on the give-back of its text, or its decision's record (hookTimeouts.limits). */
  releaseTimeoutMs: number;
}

/**
 * A pumping store write the start's answer waits on no longer than on a budget's refund
 * (hookTimeouts.limits): a store that fails or hangs only costs that write, which is logged (and
 * told to `onFailure`). Never rejects.
 */
export function writeWithin(
  deps: PumpingWriteDeps,
  what: string,
  write: () => Promise<unknown>,
  failed: string,
  onFailure?: () => void,
): Promise<void> {
  const ms = deps.releaseTimeoutMs;
  const late = () => new Error(`${what} did not settle within ${ms} ms`);
  return withDeadline('limits', ms, write, { late, onLateRejection: lateRejectionLogger(deps.logger) }).then(
    () => undefined,
    (error: unknown) => {
      deps.logger.warn({ route: 'start', err: describeError(error) }, failed);
      onFailure?.();
    },
  );
}

/** A reserved text's send, as attachSend records it. */
export interface SendRecord {
  sessionId: string;
  keys: StartKeys['keys'];
  hour: number;
}

/** Where a send whose record failed is kept, to be recorded again (pumping-unrecorded.ts). */
export interface UnrecordedKeeper {
  keep(send: SendRecord): void;
}

const RECORD_SEND_FAILED =
  'could not count a text for the SMS pumping rules; its record is written again at a later start';

/**
 * The pass of a start whose text the check counted, in `hour`. A class, not an object with a
 * closure made at every start: run through tsx, each named closure costs a defineProperty.
 */
export class ReservedPass implements PumpingPass {
  constructor(
    private readonly deps: PumpingWriteDeps,
    private readonly store: PumpingStore,
    private readonly keys: StartKeys['keys'],
    private readonly hour: number,
    private readonly unrecorded: UnrecordedKeeper,
  ) {}

  // Recorded in the hour it was counted in, so its verification counts there too. A record that
  // fails is kept and written again: without it, its verification could never count.
  sent(sessionId: string): Promise<void> {
    const send: SendRecord = { sessionId, keys: this.keys, hour: this.hour };
    const write = () => this.store.attachSend(send);
    return writeWithin(this.deps, 'recording the send', write, RECORD_SEND_FAILED, () => this.unrecorded.keep(send));
  }

  // A text counted and never sent only makes the rules refuse sooner: a failure is only logged.
  unsent(): Promise<void> {
    return release(this.deps, this.store, this.keys, this.hour);
  }
}

// The answer waits on the give-back no longer than a budget's refund: a store that hangs only costs a count.
export function release(
  deps: PumpingWriteDeps,
  store: PumpingStore,
  keys: StartKeys['keys'],
  hour: number,
): Promise<void> {
  const give = () => store.releaseSend({ keys, hour });
  return writeWithin(
    deps,
    'giving back the text',
    give,
    'could not give back a text counted for the SMS pumping rules',
  );
}
