/**
 * The SMS pumping check of a start, before its text and before its budgets (a refusal spends
 * none): read the counters of the start's keys and count its text in the same atomic step (so
 * concurrent starts, on any instance, each read the texts of those before them), judge on the
 * counts before it, record the decision, and then let the start go on, offer the app's challenge,
 * or refuse it with the same 429 as a spent budget (the answer never names the rule). A refused
 * start gives its text back, as does a start that ends before its session exists; once the
 * session exists, its send is recorded for the verification to count under.
 */
import type { Request } from 'express';
import { withDeadline } from '../deadline.ts';
import { describeError, lateRejectionLogger, type KitLogger } from '../logger.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { maskDestination } from '../numbers/mask-number.ts';
import type { ReadNumber } from '../numbers/parse-number.ts';
import { countPumpingDecision } from '../telemetry.ts';
import type { PumpingDecisionRecord, PumpingStore } from '../store/types.ts';
import { judge, keysRefusedBy } from './pumping-decision.ts';
import { startKeys, type StartKeys } from './pumping-keys.ts';
import type { ResolvedPumping } from './pumping-options.ts';
import { hourOf, isHold } from './pumping-rules.ts';

/** What the start does once its session exists, or when it ends before one exists. Neither rejects. */
export interface PumpingPass {
  /** The session exists: its text is counted under the start's keys. */
  sent(sessionId: string): Promise<void>;
  /** The start ended before any session existed (nothing was sent): its text is given back. */
  unsent(): Promise<void>;
}

export interface PumpingGuardDeps {
  pumping: ResolvedPumping;
  store: PumpingStore | undefined;
  logger: KitLogger;
  now: () => number;
  challengeTimeoutMs: number;
  /** The prefix an IPv6 client is counted by: the start limits' (`limits.ipv6Subnet`). */
  ipv6Subnet: number;
  /** How long a start's answer waits on the give-back of its text, or its decision's record (hookTimeouts.limits). */
  releaseTimeoutMs: number;
}

/** A refused start waits this long: the hourly rules' window. The same for every rule, so it tells nothing. */
export const PUMPING_RETRY_AFTER_SECONDS = 3600;
/** Counts and sends are kept this long: the 14-day maximum reads 14 days back. */
const COUNTS_KEPT_HOURS = 15 * 24;
const DECISIONS_KEPT_MS = 30 * 24 * 3_600_000;
const PURGE_EVERY_MS = 5 * 60_000;
const PURGE_BATCH = 1000;

/** `who.number`: the destination as readStoredNumber read it, when the start has read it already. */
export type PumpingGuard = (
  req: Request,
  who: { userRef: string; destination: string; number?: ReadNumber | undefined },
) => Promise<PumpingPass | undefined>;

function refusal(): KitError {
  return new KitError(
    KitErrorCode.RateLimited,
    `Too many verification attempts; try again in ${PUMPING_RETRY_AFTER_SECONDS} s.`,
    { retryAfterSeconds: PUMPING_RETRY_AFTER_SECONDS },
  );
}

/** The app's challenge, under its deadline: one that throws, rejects or is late counts as not passed. */
async function passedChallenge(deps: PumpingGuardDeps, req: Request): Promise<boolean> {
  const { challenge } = deps.pumping;
  if (challenge === undefined) return false;
  try {
    const verified = await withDeadline('challenge', deps.challengeTimeoutMs, () => challenge.verify(req), {
      onLateRejection: lateRejectionLogger(deps.logger),
    });
    return verified === true;
  } catch (error) {
    deps.logger.warn(
      { route: 'start', err: describeError(error) },
      'the SMS pumping challenge failed; counted as not passed',
    );
    return false;
  }
}

/**
 * Decisions stored and logged per minute per instance. A refusal spends no text, so without a
 * bound an attacker could grow the decisions table and the logs as fast as it can post; past it a
 * decision is only counted (telemetry, and a refusal's count under its keys, which the rules read).
 */
export const PUMPING_DECISIONS_RECORDED_PER_MINUTE = 60;
const MINUTE_MS = 60_000;

type Decision = PumpingDecisionRecord['decision'];

/**
 * The bound on what decisions write, by the kit's clock: a fixed number of fields, whatever the
 * traffic. A minute that left decisions unwritten is told in one log line at the next start.
 */
class DecisionBound {
  private minute = Number.NEGATIVE_INFINITY;
  private written = 0;
  private unwritten: Record<Decision, number> = { warned: 0, refused: 0, challenged: 0 };

  constructor(private readonly deps: PumpingGuardDeps) {}

  /** Logs the last minute's unwritten decisions once a new minute has begun. */
  turn(now: number): void {
    const minute = Math.floor(now / MINUTE_MS);
    if (minute === this.minute) return;
    const { unwritten } = this;
    const total = unwritten.warned + unwritten.refused + unwritten.challenged;
    if (total > 0) {
      this.deps.logger.warn(
        { route: 'start', pumping: 'unrecorded', unrecorded: { ...unwritten }, minute: this.minute * MINUTE_MS },
        `${total} SMS pumping decisions of the minute from ${new Date(this.minute * MINUTE_MS).toISOString()} were counted but not stored or logged (at most ${PUMPING_DECISIONS_RECORDED_PER_MINUTE} a minute are)`,
      );
    }
    this.minute = minute;
    this.written = 0;
    this.unwritten = { warned: 0, refused: 0, challenged: 0 };
  }

  /** True when this decision is stored and logged; false when the minute's bound is reached (it is counted as unwritten). */
  take(decision: Decision, now: number): boolean {
    this.turn(now);
    if (this.written < PUMPING_DECISIONS_RECORDED_PER_MINUTE) {
      this.written += 1;
      return true;
    }
    this.unwritten[decision] += 1;
    return false;
  }
}

/**
 * A pumping store write the start's answer waits on no longer than on a budget's refund
 * (hookTimeouts.limits): a store that fails or hangs only costs that write, which is logged. Never
 * rejects.
 */
function writeWithin(
  deps: PumpingGuardDeps,
  what: string,
  write: () => Promise<unknown>,
  failed: string,
): Promise<void> {
  const ms = deps.releaseTimeoutMs;
  const late = () => new Error(`${what} did not settle within ${ms} ms`);
  return withDeadline('limits', ms, write, { late, onLateRejection: lateRejectionLogger(deps.logger) }).then(
    () => undefined,
    (error: unknown) => {
      deps.logger.warn({ route: 'start', err: describeError(error) }, failed);
    },
  );
}

/**
 * Counted, then stored and logged (the number masked) within the bound; a store that fails here
 * never fails the start.
 */
async function record(
  deps: PumpingGuardDeps,
  store: PumpingStore,
  bound: DecisionBound,
  start: StartKeys,
  destination: string,
  decision: Decision,
  reasons: string[],
): Promise<void> {
  const { country, block, address, userRef } = start;
  countPumpingDecision(decision, reasons, country);
  const decidedAt = deps.now();
  // A start challenged presses on its keys as a refused one does: what holds a key counts both.
  const pressed = decision === 'warned' ? undefined : { keys: keysRefusedBy(start, reasons), hour: hourOf(decidedAt) };
  if (!bound.take(decision, decidedAt)) {
    // Past the bound a refusal (or a challenge) is only counted under the keys that tripped.
    if (pressed !== undefined) {
      await writeWithin(deps, 'counting the refusal', () => store.countRefused(pressed), COUNT_REFUSAL_FAILED);
    }
    return;
  }
  deps.logger.warn(
    { route: 'start', pumping: decision, reasons, country, destination: maskDestination(destination) },
    decision === 'refused'
      ? 'start refused: it matches SMS pumping (texts never verified); nothing was sent'
      : `start ${decision === 'warned' ? 'sent' : 'sent after the challenge'} although it matches SMS pumping (texts never verified)`,
  );
  const recorded = { decidedAt, decision, reasons, country, block, address, userRef };
  await writeWithin(
    deps,
    'recording the decision',
    () => store.recordDecision(recorded, pressed),
    'could not record an SMS pumping decision',
  );
}

/** Deletes what the windows no longer read, now and then, without holding up the start. */
function purger(deps: PumpingGuardDeps, store: PumpingStore): (now: number) => void {
  let nextAt = 0;
  return (now) => {
    if (now < nextAt) return;
    nextAt = now + PURGE_EVERY_MS;
    const query = {
      beforeHour: hourOf(now) - COUNTS_KEPT_HOURS,
      decisionsBefore: now - DECISIONS_KEPT_MS,
      now,
      limit: PURGE_BATCH,
    };
    // A store of the app's own may throw at the call: a failure like any other, only logged.
    new Promise<number>((resolve) => resolve(store.purgePumping(query))).then(
      (purged) => {
        if (purged >= PURGE_BATCH) nextAt = now;
      },
      (error: unknown) => deps.logger.warn({ err: describeError(error) }, 'could not purge old SMS pumping counts'),
    );
  };
}

const COUNT_REFUSAL_FAILED = 'could not count an SMS pumping refusal';
const COUNT_SEND_FAILED = 'could not count a text for the SMS pumping rules';

/**
 * The pass of a start the rules let through unjudged (the app's allow-list): its text is counted
 * once sent. A class, not an object with a closure made at every start: run through tsx, each
 * named closure costs a defineProperty.
 */
class CountedPass implements PumpingPass {
  constructor(
    protected readonly deps: PumpingGuardDeps,
    protected readonly store: PumpingStore,
    protected readonly keys: StartKeys['keys'],
  ) {}

  // The text is on its way: a count that fails to be written, or is late, is only logged.
  sent(sessionId: string): Promise<void> {
    const { deps, keys } = this;
    const write = () => this.store.recordSend({ sessionId, keys, hour: hourOf(deps.now()) });
    return writeWithin(deps, 'recording the send', write, COUNT_SEND_FAILED);
  }

  unsent(): Promise<void> {
    return Promise.resolve();
  }
}

/** The pass of a judged start: its text was counted by the check, in `hour`. */
class ReservedPass extends CountedPass {
  constructor(
    deps: PumpingGuardDeps,
    store: PumpingStore,
    keys: StartKeys['keys'],
    private readonly hour: number,
  ) {
    super(deps, store, keys);
  }

  // Recorded in the hour it was counted in, so its verification counts there too.
  override sent(sessionId: string): Promise<void> {
    const { keys, hour } = this;
    return writeWithin(
      this.deps,
      'recording the send',
      () => this.store.attachSend({ sessionId, keys, hour }),
      COUNT_SEND_FAILED,
    );
  }

  // A text counted and never sent only makes the rules refuse sooner: a failure is only logged.
  override unsent(): Promise<void> {
    return release(this.deps, this.store, this.keys, this.hour);
  }
}

// The answer waits on the give-back no longer than a budget's refund: a store that hangs only costs a count.
function release(deps: PumpingGuardDeps, store: PumpingStore, keys: StartKeys['keys'], hour: number): Promise<void> {
  const give = () => store.releaseSend({ keys, hour });
  return writeWithin(
    deps,
    'giving back the text',
    give,
    'could not give back a text counted for the SMS pumping rules',
  );
}

/** A read of the pumping store before a text, under hookTimeouts.limits: rejects when late. */
function checkWithin<T>(deps: PumpingGuardDeps, reading: Promise<T>): Promise<T> {
  const ms = deps.releaseTimeoutMs;
  const late = () =>
    new KitError(
      KitErrorCode.HookFailed,
      `The SMS pumping check did not settle within ${ms} ms; the start was not sent (raise hookTimeouts.limits if the store needs longer).`,
    );
  return withDeadline('limits', ms, () => reading, { late, onLateRejection: lateRejectionLogger(deps.logger) });
}

/**
 * Whether an operator blocked one of an allow-listed start's keys: the allow-list lifts the rules
 * on the counts, never an operator's block (an attack on a block of the app's home country is what
 * a block answers). Read, not counted: the text is counted once sent, as any allow-listed one.
 */
async function operatorBlocked(
  deps: PumpingGuardDeps,
  store: PumpingStore,
  start: StartKeys,
  hour: number,
  now: number,
) {
  const reading = await checkWithin(deps, store.readPumping({ keys: start.keys, address: start.address, hour, now }));
  return reading.rules.some((rule) => rule.rule === 'block');
}

/**
 * The store's reading and count of the start's text (reserveSend), waited on no longer than the
 * start budgets (hookTimeouts.limits): one that rejects or is late fails the start, never lets it
 * through unchecked. A late one that counts the text after all gives it back.
 */
async function reserve(deps: PumpingGuardDeps, store: PumpingStore, start: StartKeys, hour: number, now: number) {
  const reserving = store.reserveSend({ keys: start.keys, address: start.address, hour, now });
  try {
    return await checkWithin(deps, reserving);
  } catch (error) {
    reserving.then(
      () => release(deps, store, start.keys, hour),
      () => undefined,
    );
    throw error;
  }
}

export function pumpingGuard(deps: PumpingGuardDeps): PumpingGuard {
  const { store } = deps;
  if (store === undefined) return async () => undefined;
  const purge = purger(deps, store);
  // Off, nothing is counted, but what was kept while the rules were on (decisions hold addresses
  // and userRefs) is still deleted past keeping.
  if (deps.pumping.mode === 'off') {
    return async () => {
      purge(deps.now());
      return undefined;
    };
  }
  const bound = new DecisionBound(deps);
  return async (req, who) => {
    const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const start = startKeys(who.destination, ip, who.userRef, who.number, deps.ipv6Subnet);
    const now = deps.now();
    const hour = hourOf(now);
    // Allow-listed starts too: an app whose every start is allow-listed still counts them all.
    purge(now);
    bound.turn(now);
    if (deps.pumping.allows({ country: start.country, e164: start.e164, ip, userRef: who.userRef })) {
      if (!(await operatorBlocked(deps, store, start, hour, now))) return new CountedPass(deps, store, start.keys);
      // As a judged start's block: the challenge is checked (its answer unread), nothing was counted.
      await passedChallenge(deps, req);
      await record(deps, store, bound, start, who.destination, 'refused', ['blocked']);
      throw refusal();
    }
    const reading = await reserve(deps, store, start, hour, now);
    const pass = new ReservedPass(deps, store, start.keys, hour);
    const verdict = judge(reading, start, deps.pumping.thresholds, now);
    if (verdict.reasons.length === 0) return pass;
    if (deps.pumping.mode === 'record' && !verdict.blocked) {
      await record(deps, store, bound, start, who.destination, 'warned', verdict.reasons);
      return pass;
    }
    // Checked for a blocked or held start too, which no challenge lifts: its refusal then takes as
    // long as one by the counts, so the timing does not tell them from the rules. A held key is one
    // an attack keeps pressing on, and a solving service passes most challenges for a fraction of
    // a cent: passing one must not reopen it.
    const passed = await passedChallenge(deps, req);
    if (!verdict.blocked && !verdict.reasons.some(isHold) && passed) {
      await record(deps, store, bound, start, who.destination, 'challenged', verdict.reasons);
      return pass;
    }
    // Counters as if the start never came, but for its refusal.
    await Promise.all([
      record(deps, store, bound, start, who.destination, 'refused', verdict.reasons),
      release(deps, store, start.keys, hour),
    ]);
    throw refusal();
  };
}
