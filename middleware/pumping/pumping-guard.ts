/**
 * The SMS pumping check of a start, before its text and before its budgets (a refusal spends
 * none): the store reads the counters of the start's keys, the rules judge the reading, and the
 * store counts what the verdict says in the same atomic step (the text of a start that goes on, or
 * a refusal under the keys that refused it), so concurrent starts, on any instance, each read the
 * texts of those before them and none of a refused start. Then the decision is recorded and the
 * start goes on, is offered the app's challenge (a passed one counts its text in a check of its
 * own), or is refused with the same 429 as a spent budget (the answer never names the rule). A
 * start that ends before its session exists gives its text back; once the session exists, its send
 * is recorded for the verification to count under.
 */
import type { Request } from 'express';
import { withDeadline } from '../deadline.ts';
import { describeError, lateRejectionLogger, markingErrors, thrownByIntegratorCode } from '../logger.ts';
import { callsThrough } from '../store/calls-through.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import type { ReadNumber } from '../numbers/parse-number.ts';
import type { CountedByCheck, PumpingKey, PumpingReading, PumpingStore, SureLimits } from '../store/types.ts';
import {
  anyCount,
  headroomOn,
  judge,
  keysRefusedBy,
  noLimits,
  sureLimitsFor,
  withoutOwnPress,
  type Verdict,
} from './pumping-decision.ts';
import { EarlierCountryCounts } from './pumping-earlier-counts.ts';
import { startKeys, type StartKeys } from './pumping-keys.ts';
import type { ResolvedPumping } from './pumping-options.ts';
import { release, ReservedPass, type PumpingPass, type PumpingWriteDeps } from './pumping-pass.ts';
import { DecisionBound, record } from './pumping-record.ts';
import { UnrecordedSends } from './pumping-unrecorded.ts';
import { hourOf, isHold } from './pumping-rules.ts';

export type { PumpingPass } from './pumping-pass.ts';
export { PUMPING_DECISIONS_RECORDED_PER_MINUTE } from './pumping-record.ts';

export interface PumpingGuardDeps extends PumpingWriteDeps {
  pumping: ResolvedPumping;
  store: PumpingStore | undefined;
  challengeTimeoutMs: number;
  /** The prefix an IPv6 client is counted by: the start limits' (`limits.ipv6Subnet`). */
  ipv6Subnet: number;
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

/** The app's check; a KitError it throws is in the app's words, logged masked as its other errors. */
async function verifiedBy(challenge: NonNullable<ResolvedPumping['challenge']>, req: Request): Promise<unknown> {
  try {
    return await challenge.verify(req);
  } catch (error) {
    throw thrownByIntegratorCode(error);
  }
}

/** The app's challenge, under its deadline: one that throws, rejects or is late counts as not passed. */
async function passedChallenge(deps: PumpingGuardDeps, req: Request): Promise<boolean> {
  const { challenge } = deps.pumping;
  if (challenge === undefined) return false;
  try {
    const verified = await withDeadline('challenge', deps.challengeTimeoutMs, () => verifiedBy(challenge, req), {
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
 * The store's check (reserveSend): the reading, `decide` on it and what it counts, waited on no
 * longer than the start budgets (hookTimeouts.limits): one that rejects or is late fails the start,
 * never lets it through unchecked. A late one that counts the text after all gives it back. With
 * `sure`, the limits under which decide counts the text, known before the reading.
 */
async function reserve(
  deps: PumpingGuardDeps,
  store: PumpingStore,
  start: StartKeys,
  when: { hour: number; now: number; sure?: SureLimits },
  decide: (reading: PumpingReading) => CountedByCheck,
): Promise<void> {
  let counted: CountedByCheck | undefined;
  const query = { keys: start.keys, address: start.address, hour: when.hour, now: when.now, sure: when.sure };
  const reserving = store.reserveSend(query, (reading) => (counted = decide(reading)));
  try {
    await checkWithin(deps, reserving);
  } catch (error) {
    reserving.then(
      () => (counted?.count === 'text' ? release(deps, store, start.keys, when.hour) : undefined),
      () => undefined,
    );
    throw error;
  }
  // A store written for an earlier kit reads and counts the text without asking: never let
  // through unjudged (an operator's block included). Its count is given back.
  if (counted === undefined) {
    await release(deps, store, start.keys, when.hour);
    throw new KitError(
      KitErrorCode.HookFailed,
      "The pumping store's reserveSend did not call decide with its reading (a store written for an earlier kit); the start was not sent. Pass decide's answer to the count (see PumpingStore.reserveSend).",
    );
  }
}

const TEXT: CountedByCheck = { count: 'text' };
const NOTHING: CountedByCheck = { count: 'refusal', keys: [] };

/** A start that goes on without the challenge: no rule tripped, or only warned of (record mode, no operator's block). */
function goesOn(verdict: Verdict, mode: ResolvedPumping['mode']): boolean {
  return verdict.reasons.length === 0 || (mode === 'record' && !verdict.blocked);
}

/** Whether passing the challenge lets the start through: not for an operator's block, nor for a key held. */
function liftedByChallenge(verdict: Verdict): boolean {
  return !verdict.blocked && !verdict.reasons.some(isHold);
}

/**
 * The check of a start offered the challenge, made once its answer is in: when the challenge passed
 * and lifts the first refusal (`lifts`), the start's text is counted in this check of its own,
 * judged again (less the start's own press), as concurrent challenged starts may have held its
 * keys, or an operator blocked one, while it solved the challenge. Made all the same, counting
 * nothing, when the challenge failed or cannot lift the refusal (a block, a hold): a refusal after
 * the challenge then takes the same round trips whichever rule refused it and whatever the
 * challenge answered. Its verdict, the hour it counted in, and whether it counted the text.
 */
async function checkAfterChallenge(
  deps: PumpingGuardDeps,
  store: PumpingStore,
  start: StartKeys,
  first: { hour: number; pressed: readonly PumpingKey[]; lifts: boolean },
): Promise<{ verdict: Verdict; hour: number; counted: boolean }> {
  const now = deps.now();
  const hour = hourOf(now);
  let verdict: Verdict = { reasons: [], blocked: false };
  let counted = false;
  await reserve(deps, store, start, { hour, now }, (reading) => {
    const others = withoutOwnPress(reading, start, first.pressed, first.hour, hour);
    verdict = judge(others, start, deps.pumping.thresholds, now);
    counted = first.lifts && liftedByChallenge(verdict);
    return counted ? TEXT : NOTHING;
  });
  return { verdict, hour, counted };
}

/**
 * A refused start offered the app's challenge, and the check after it (checkAfterChallenge). Checked
 * for a blocked or held start too, which no challenge lifts: its refusal then takes as long as one
 * by the counts, so the timing does not tell them from the rules. A held key is one an attack keeps
 * pressing on, and a solving service passes most challenges for a fraction of a cent: passing one
 * must not reopen it. The hour its text was counted in when it goes on; else the verdict it is
 * refused by.
 */
async function afterChallenge(
  deps: PumpingGuardDeps,
  store: PumpingStore,
  req: Request,
  start: StartKeys,
  first: { hour: number; pressed: readonly PumpingKey[]; verdict: Verdict },
): Promise<{ countedIn?: number; verdict: Verdict }> {
  const lifts = (await passedChallenge(deps, req)) && liftedByChallenge(first.verdict);
  if (deps.pumping.challenge === undefined) return { verdict: first.verdict };
  const second = await checkAfterChallenge(deps, store, start, { hour: first.hour, pressed: first.pressed, lifts });
  if (second.counted) return { countedIn: second.hour, verdict: first.verdict };
  return { verdict: lifts ? second.verdict : first.verdict };
}

export function pumpingGuard(deps: PumpingGuardDeps): PumpingGuard {
  if (deps.store === undefined) return async () => undefined;
  // A KitError of a store of the app's own is in its words (it may name a user): logged masked.
  const store = callsThrough(deps.store, (_name, call) => markingErrors(call));
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
  const unrecorded = new UnrecordedSends(deps, store);
  const earlier = new EarlierCountryCounts();
  return async (req, who) => {
    const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const start = startKeys(who.destination, ip, who.userRef, who.number, deps.ipv6Subnet);
    const now = deps.now();
    const hour = hourOf(now);
    // Allow-listed starts too: an app whose every start is allow-listed still counts them all.
    purge(now);
    unrecorded.recordAgain(now);
    bound.turn(now);
    if (deps.pumping.allows({ country: start.country, e164: start.e164, ip, userRef: who.userRef })) {
      // The allow-list lifts the rules on the counts, never an operator's block. Read and counted as
      // a judged start is: a blocked start's 429 takes the same round trips whether or not the list
      // covers it (else its timing tells the attacker what the list lets through), and concurrent
      // checks read the text as soon as it is decided.
      let blocked = false;
      await reserve(deps, store, start, { hour, now, sure: noLimits(start) }, (reading) => {
        blocked = reading.rules.some((rule) => rule.rule === 'block');
        return blocked ? NOTHING : { count: 'text', headroom: anyCount(start) };
      });
      if (!blocked) return new ReservedPass(deps, store, start.keys, hour, unrecorded);
      // As a judged start's block: the challenge is checked and the check after it made, nothing counted.
      const blockedVerdict = { reasons: ['blocked'], blocked: true };
      await afterChallenge(deps, store, req, start, { hour, pressed: [], verdict: blockedVerdict });
      await record(deps, store, bound, start, who.destination, 'refused', ['blocked']);
      throw refusal();
    }
    const { thresholds, mode } = deps.pumping;
    // Judged and counted in the store's one atomic step: a start that goes on counts its text, one
    // offered the challenge or refused counts a refusal under the keys that refused it (what holds
    // a key) and no text, so concurrent starts read every text sent before theirs and no refused one.
    let verdict: Verdict = { reasons: [], blocked: false };
    let pressed: readonly PumpingKey[] = [];
    const sure =
      mode === 'record' ? noLimits(start) : sureLimitsFor(start, thresholds, earlier.get(start.country, hour), now);
    await reserve(deps, store, start, { hour, now, sure }, (reading) => {
      earlier.keep(start.country, hour, reading.counts[0]);
      verdict = judge(reading, start, thresholds, now);
      pressed = goesOn(verdict, mode) ? [] : keysRefusedBy(start, verdict.reasons);
      if (verdict.reasons.length === 0) return { count: 'text', headroom: headroomOn(reading, start, thresholds, now) };
      // Warned in record mode: sent whatever the others count (only a block, no count, refuses).
      return goesOn(verdict, mode) ? { count: 'text', headroom: anyCount(start) } : { count: 'refusal', keys: pressed };
    });
    const pass = (inHour: number) => new ReservedPass(deps, store, start.keys, inHour, unrecorded);
    if (verdict.reasons.length === 0) return pass(hour);
    if (goesOn(verdict, mode)) {
      await record(deps, store, bound, start, who.destination, 'warned', verdict.reasons);
      return pass(hour);
    }
    const after = await afterChallenge(deps, store, req, start, { hour, pressed, verdict });
    if (after.countedIn !== undefined) {
      await record(deps, store, bound, start, who.destination, 'challenged', verdict.reasons);
      return pass(after.countedIn);
    }
    await record(deps, store, bound, start, who.destination, 'refused', after.verdict.reasons);
    throw refusal();
  };
}
