/**
 * Actions that text a number the user types (`destination: 'entered'`, given to the audit with
 * `enteredNumber`): the number becomes the user's only through its own verification, exactly
 * the number texted, never a premium-rate one, and it is shown in full only in its own form.
 */
import { parseHandoffPage, type Answer } from './agent.ts';
import { isRefused, type AuditCheck, type Verdict } from './check.ts';
import { pagesAfter } from './checks-pages.ts';
import { unkeptSaid } from './kept-bodies.ts';
import type { AuditAction } from './options.ts';
import { confirmItsYouForm } from './start-grant.ts';
import { grantBeforeStart } from './step-up-flow.ts';
import { placesOf, showsNumber } from './typed-number-places.ts';
import { digitsOf, ENTERED_NUMBER_FIELD, type AuditUser, type AuditWorld, type StartedAttempt } from './world.ts';

const NOT_GIVEN =
  "no action of `actions` has `enteredNumber`: give it for your actions with destination 'entered', e.g. { name: 'change_phone', enteredNumber: { numberOf: (user) => SELECT phone ... } }";

/**
 * Numbers a person never reads a code on and whose owner is paid per text: a UK premium-rate
 * number (09098 790000) and a US 900 number.
 */
const UK_PREMIUM_RATE = '+44 9098 790000';
/** Each with how evidence names it: the report shows no number in full. */
/** Numbers whose caller pays their owner (the pumping payout), and one of no country: the kit refuses each by default. */
export const PREMIUM_RATE_NUMBERS = [
  { phone: UK_PREMIUM_RATE, name: 'the UK premium-rate number (09098 …)' },
  { phone: '+1 900 555 0123', name: 'the US 900 number (+1 900 …)' },
  { phone: '+33 810 12 34 56', name: 'the French shared-cost number (0810 …)' },
  { phone: '+44 70 1234 5678', name: 'the UK personal number (070 …)' },
  { phone: '+881 2 1234 5678', name: 'the satellite number of no country (+881 …)' },
];

/** The names an app may read a number from a query by: the start form's field, and those most used. */
const NUMBER_NAMES = [ENTERED_NUMBER_FIELD, 'phone_number', 'phoneNumber', 'number', 'msisdn', 'mobile', 'tel', 'to'];

/** `phone` under each of NUMBER_NAMES, as the landing's query may be given it (`&phone=...&number=...`). */
function numberInQuery(phone: string): string {
  return NUMBER_NAMES.map((name) => `&${name}=${encodeURIComponent(phone)}`).join('');
}

function enteredActions(world: AuditWorld, verdict: Verdict): AuditAction[] {
  const actions = world.options.actions.filter((action) => action.enteredNumber !== undefined);
  if (actions.length === 0) verdict.notRun = NOT_GIVEN;
  return actions;
}

/** A new user, with the grant the action's start requires, if it requires one (as a user gets it). */
async function signInFor(world: AuditWorld, action: AuditAction): Promise<AuditUser> {
  const user = await world.signIn();
  await grantBeforeStart(world, user, action);
  return user;
}

/** How a number is named in evidence: its last two digits, as the kit masks it. */
function masked(phone: string | null): string {
  return phone === null ? 'no number' : `the number ending ${digitsOf(phone).slice(-2)}`;
}

/** Expects the app to hold `expected` (digits, or null) for the user; says what it held otherwise. */
async function expectHeld(
  world: AuditWorld,
  verdict: Verdict,
  action: AuditAction,
  user: AuditUser,
  expected: string | null,
  when: string,
): Promise<void> {
  const held = await world.numberOf(action, user);
  verdict.expect(held === expected, `${action.name}: ${when}, your app holds ${masked(held)}, not ${masked(expected)}`);
}

/** Ends the attempt as verified through the emulator and opens its true landing (with `extra` on the query). */
async function verifyAndLand(world: AuditWorld, user: AuditUser, attempt: StartedAttempt, extra = ''): Promise<Answer> {
  await world.control.completeSession(attempt.sessionId, 'verified');
  return world.landOn(user, attempt, extra);
}

/**
 * Starts the action with `phone` typed; the attempt as the emulator has it. An app that ends the
 * user's step-up grants once their number changed (as it should) asks again: the user confirms
 * it's them, as a user does, and starts again.
 */
async function startWith(
  world: AuditWorld,
  user: AuditUser,
  action: AuditAction,
  phone: string,
): Promise<StartedAttempt> {
  const answer = await world.postStart(user, action, { phone });
  if (action.requireRecentVerification === undefined || confirmItsYouForm(world, answer) === undefined) {
    return world.attemptOf(answer);
  }
  await grantBeforeStart(world, user, action);
  return world.attemptOf(await world.postStart(user, action, { phone }));
}

/**
 * Follows the landing on the app's origin as the browser does (the success or failure page, and
 * where that sends it on: a profile showing the number is as much a page of the flow).
 */
async function follow(world: AuditWorld, user: AuditUser, answer: Answer): Promise<void> {
  await pagesAfter(world, user, answer);
}

export const enteredChecks: AuditCheck[] = [
  {
    id: 'entered.no-early-write',
    title:
      "A typed number is not the user's before its verification: unchanged after the start, after a landing before its code was entered and after a failed verification, and the verified one applied once",
    fix: 'Write the typed number only in the action\'s fulfil(tx, attempt), from attempt.destination: never when the form is posted, never as a "pending" number the user already holds.',
    phase: 'concurrent',
    async run(world, verdict) {
      for (const action of enteredActions(world, verdict)) {
        const user = await signInFor(world, action);
        const before = await world.numberOf(action, user);
        // Landed while the service still says pending (Back on the hosted page, a slow service).
        const pending = await startWith(world, user, action, world.newNumber());
        await follow(world, user, await world.landOn(user, pending));
        await expectHeld(world, verdict, action, user, before, 'after a landing before its code was entered');
        const early = await world.effects(pending.sessionId);
        verdict.expect(
          early === 0,
          `${action.name}: a landing before the code was entered ran the action ${early} time(s)`,
        );
        const failed = await startWith(world, user, action, world.newNumber());
        await expectHeld(world, verdict, action, user, before, 'right after the start');
        await world.control.completeSession(failed.sessionId, 'failed', 'otp_locked');
        await follow(world, user, await world.landOn(user, failed));
        await expectHeld(world, verdict, action, user, before, 'after a failed verification and its landing');
        const effects = await world.effects(failed.sessionId);
        verdict.expect(effects === 0, `${action.name}: the failed verification ran the action ${effects} time(s)`);
        verdict.countAgainLater(failed.sessionId, 0, `${action.name}: the failed verification`);
        // The same user verifies another number for real: it becomes theirs, once.
        const typed = world.newNumber();
        const verified = await startWith(world, user, action, typed);
        await follow(world, user, await user.agent.request(await walk(world, user, verified)));
        await expectHeld(
          world,
          verdict,
          action,
          user,
          digitsOf(typed),
          'after the code texted to a typed number was entered',
        );
        const once = await world.effects(verified.sessionId);
        verdict.expect(once === 1, `${action.name}: the verified number's action ran ${once} time(s), not once`);
        verdict.note(`${action.name}: a pending, a failed and a verified attempt, each with its own typed number`);
      }
    },
  },
  {
    id: 'entered.no-swap',
    title:
      "Only the number texted and verified becomes the user's, once: not a number in the landing's query, not another number posted to the start since, not a newer attempt's number",
    fix: 'Take the number from attempt.destination in fulfil, and only there: never from the landing\'s query, the session, a "pending" number remembered at the last start, or the user\'s newest attempt.',
    phase: 'concurrent',
    async run(world, verdict) {
      for (const action of enteredActions(world, verdict)) {
        const user = await signInFor(world, action);
        const [a, b, c, d, e, f] = [1, 2, 3, 4, 5, 6].map(() => world.newNumber()) as [
          string,
          string,
          string,
          string,
          string,
          string,
        ];
        // The landing's query names another number.
        const first = await startWith(world, user, action, a);
        await follow(world, user, await verifyAndLand(world, user, first, numberInQuery(b)));
        await expectHeld(world, verdict, action, user, digitsOf(a), 'after a landing whose query named another number');
        const once = await world.effects(first.sessionId);
        verdict.expect(once === 1, `${action.name}: the verified attempt ran the action ${once} time(s), not once`);
        // Another number posted to the start (refused: a stale token) before the verified landing.
        const second = await startWith(world, user, action, c);
        const refused = await world.postStart(user, action, { phone: d, token: `${user.csrf}x` });
        verdict.expect(isRefused(refused), `${action.name}: a start with a wrong token answered ${refused.status}`);
        await follow(world, user, await verifyAndLand(world, user, second));
        await expectHeld(world, verdict, action, user, digitsOf(c), 'after another number was posted to the start');
        // Two attempts with two numbers: the older one verified first never applies the newer number.
        const older = await startWith(world, user, action, e);
        const newer = await startWith(world, user, action, f);
        await follow(world, user, await verifyAndLand(world, user, older));
        const held = await world.numberOf(action, user);
        verdict.expect(
          held === digitsOf(c) || held === digitsOf(e),
          `${action.name}: after the older of two attempts was verified, your app holds ${held === digitsOf(f) ? "the newer attempt's number, never verified" : masked(held)}`,
        );
        await follow(world, user, await verifyAndLand(world, user, newer));
        await follow(world, user, await world.landOn(user, newer));
        await expectHeld(
          world,
          verdict,
          action,
          user,
          digitsOf(f),
          'after the newer attempt was verified (and its landing reloaded)',
        );
        const newerOnce = await world.effects(newer.sessionId);
        verdict.expect(
          newerOnce === 1,
          `${action.name}: the newer attempt ran the action ${newerOnce} time(s), not once`,
        );
        verdict.note(`${action.name}: 4 attempts, each with its own typed number, and 2 numbers never texted`);
      }
    },
  },
  {
    id: 'entered.refused-number',
    title:
      'A number typed whose caller pays its owner (premium-rate UK 09098 and US +1 900, shared-cost FR 0810, a UK 070 personal number) or of no country (+881) is refused with a 4xx before any text or session',
    fix: "Keep the kit's destinationPolicy defaults (no allowTypes for PREMIUM_RATE, SHARED_COST or PERSONAL_NUMBER, no NO_COUNTRY in allowCountries), and start an entered-number action only through the kit's start.",
    phase: 'alone',
    async run(world, verdict) {
      for (const action of enteredActions(world, verdict)) {
        const user = await signInFor(world, action);
        const held = await world.numberOf(action, user);
        for (const { phone, name } of PREMIUM_RATE_NUMBERS) {
          const before = await world.control.stats();
          const answer = await world.postStart(user, action, { phone });
          const after = await world.control.stats();
          const texted = (await world.control.sentMessages()).filter((m) => digitsOf(m.to) === digitsOf(phone));
          const handedOff = answer.status === 200 && parseHandoffPage(answer.body) !== undefined;
          verdict.note(`${action.name}: ${name} answered ${answer.status}`);
          verdict.expect(
            isRefused(answer) && !handedOff,
            `${action.name}: ${name} answered ${answer.status}, not a 4xx`,
          );
          verdict.expect(texted.length === 0, `${action.name}: ${name} was texted ${texted.length} time(s)`);
          verdict.expect(
            after.creates === before.creates && after.smsSent === before.smsSent,
            `${action.name}: ${name} created ${after.creates - before.creates} session(s) and sent ${after.smsSent - before.smsSent} SMS`,
          );
        }
        await expectHeld(world, verdict, action, user, held, 'after the premium-rate numbers were refused');
      }
    },
  },
  {
    id: 'entered.number-masked',
    title:
      'A typed number is shown in full only in its own form: in no URL, header, other page or log line (masked "•• 23" elsewhere)',
    fix: 'Show a typed number masked (its last digits) everywhere but the form it is typed in: never put it in a redirect or query, a header, a success or account page, or a log line.',
    phase: 'last',
    async run(world, verdict) {
      const actions = enteredActions(world, verdict);
      if (actions.length === 0) return;
      // Every action: each has its own success page, where it may show the number it texted.
      const typed: string[] = [];
      for (const action of actions) {
        const user = await signInFor(world, action);
        const verifiedNumber = world.newNumber();
        const verified = await startWith(world, user, action, verifiedNumber);
        const location = await walk(world, user, verified);
        if (world.resolve(location).origin === world.options.appOrigin) {
          await follow(world, user, await user.agent.request(location));
        }
        const failedNumber = world.newNumber();
        const failed = await startWith(world, user, action, failedNumber);
        await world.control.completeSession(failed.sessionId, 'failed', 'otp_locked');
        await follow(world, user, await world.landOn(user, failed));
        await world.postStart(user, action, { phone: UK_PREMIUM_RATE });
        typed.push(verifiedNumber, failedNumber);
      }
      let searched = 0;
      for (const phone of typed) {
        const shows = showsNumber(phone);
        for (const x of world.exchanges) {
          for (const place of placesOf(world, x)) {
            searched += 1;
            verdict.expect(!shows(place.text), `a typed number in full in ${place.where}`);
          }
        }
        const lines = await world.logLines();
        for (const [index, line] of lines.entries()) {
          verdict.expect(!shows(line), `a typed number in full in log line ${index + 1} of ${lines.length}`);
        }
      }
      verdict.note(
        `${typed.length} typed numbers (one verified, one failed, of each of ${actions.map((a) => a.name).join(', ')}) searched in ${searched} places of the app's exchanges${world.options.logs === undefined ? ' (no `logs` given)' : ' and its log'}`,
      );
      const unkept = world.exchanges.flatMap((x) =>
        x.url.startsWith(world.options.appOrigin) ? (x.unkeptBody ?? []) : [],
      );
      const unsaid = unkeptSaid(unkept, 'the typed numbers');
      if (unsaid !== undefined) verdict.note(unsaid);
    },
  },
];

/** Walks the hosted page (the real code texted to the typed number); the landing URL. */
async function walk(world: AuditWorld, user: AuditUser, attempt: StartedAttempt): Promise<string> {
  return world.resolve(await world.walkHostedPage(user, attempt), world.options.appUrl).href;
}
