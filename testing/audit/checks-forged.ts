/**
 * Forged landings: arrival proves nothing. Unknown or crossed identifiers, a wrong or missing
 * `state`, a service answer whose echo was tampered with, and a landing for an attempt that was
 * never verified (its return link opened, or its values posted to the landing as a form) must all
 * leave the action unrun.
 */
import { describeAnswer, expectNoEffect, isRefused, randomState, type AuditCheck, type Verdict } from './check.ts';
import { pagesAfter } from './checks-pages.ts';
import type { AuditUser, AuditWorld, StartedAttempt } from './world.ts';

const LANDING_FIX =
  "Mount the kit's landing (app.use(kit.router)) and let nothing before it act on session_id or state: the kit re-reads the session and fulfils only a verified attempt whose state, userRef and session_id match.";

/**
 * Posts the attempt's true return values (session_id and state) to the landing as a form, as a
 * service returning by a form post would, follows the answer on the app's origin as the browser
 * does, and expects no more effects than the attempt had before: an app whose return path also
 * takes a POST may act there on arrival. A 404 or 405 is fine.
 */
async function expectPostedReturnRunsNothing(
  world: AuditWorld,
  verdict: Verdict,
  user: AuditUser,
  attempt: StartedAttempt,
  what: string,
): Promise<void> {
  const before = await world.effects(attempt.sessionId);
  const values = Object.fromEntries(new URL(attempt.returnLocation).searchParams);
  const answer = await user.agent.postForm(world.landingPath(), values, world.sameOrigin());
  const after = (await pagesAfter(world, user, answer)).map((page) => page.pathname + page.search);
  verdict.note(
    `${what}, its session_id and state posted: ${describeAnswer(answer)}; pages after it: ${after.join(', ') || 'none'}`,
  );
  const count = await world.effects(attempt.sessionId);
  verdict.expect(
    count === before,
    `${what}: after its session_id and state were posted to the landing, the action ran ${count - before} more time(s) for ${attempt.sessionId}`,
  );
}

export const forgedChecks: AuditCheck[] = [
  {
    id: 'forged.unknown-session',
    title:
      "A landing for a session nobody started is refused and runs nothing, even with a verified attempt's true state (of any action)",
    fix: LANDING_FIX,
    phase: 'concurrent',
    async run(world, verdict) {
      for (const action of world.options.actions) {
        const user = await world.signIn();
        const real = await world.verified(user, action);
        const unknown = `ses_${randomState()}`;
        // A true state must not "repair" an id the service never issued.
        for (const state of [randomState(), real.state]) {
          const answer = await world.land(
            user,
            `session_id=${encodeURIComponent(unknown)}&state=${encodeURIComponent(state)}`,
          );
          verdict.note(
            `${action.name}: ${state === real.state ? "the verified attempt's state" : 'a random state'}: ${describeAnswer(answer)}`,
          );
          verdict.expect(
            isRefused(answer),
            `${action.name}: an unknown session_id answered ${answer.status}, not a 4xx`,
          );
        }
        await expectNoEffect(
          world,
          verdict,
          [real.sessionId, unknown],
          `${action.name}: after an unknown session landed`,
          [unknown],
        );
      }
    },
  },
  {
    id: 'forged.foreign-session',
    title:
      "A session_id crossed with another user's attempt's state (either way round, of any action) is refused and runs neither attempt",
    fix: LANDING_FIX,
    phase: 'concurrent',
    async run(world, verdict) {
      const crossed = (id: StartedAttempt, state: StartedAttempt) =>
        `session_id=${encodeURIComponent(id.sessionId)}&state=${encodeURIComponent(state.state)}`;
      for (const action of world.options.actions) {
        const owner = await world.signIn();
        const other = await world.signIn();
        const verified = await world.verified(owner, action);
        const pending = await world.start(other, action);
        // Either value may be the one an app trusts to find the attempt.
        for (const query of [crossed(verified, pending), crossed(pending, verified)]) {
          for (const who of [other, owner]) {
            const answer = await world.land(who, query);
            verdict.note(`${action.name}: ${who === owner ? 'owner' : 'other user'}: ${describeAnswer(answer)}`);
            verdict.expect(
              isRefused(answer),
              `${action.name}: a crossed session_id/state pair answered ${answer.status}, not a 4xx`,
            );
          }
        }
        await expectNoEffect(
          world,
          verdict,
          [verified.sessionId, pending.sessionId],
          `${action.name}: after a crossed landing`,
          [pending.sessionId],
        );
      }
    },
  },
  {
    id: 'forged.wrong-state',
    title: 'A verified session_id (of any action) with a wrong state is refused and runs nothing',
    fix: LANDING_FIX,
    phase: 'concurrent',
    async run(world, verdict) {
      for (const action of world.options.actions) {
        const user = await world.signIn();
        const verified = await world.verified(user, action);
        const answer = await world.land(
          user,
          `session_id=${encodeURIComponent(verified.sessionId)}&state=${randomState()}`,
        );
        verdict.note(`${action.name}: ${describeAnswer(answer)}`);
        verdict.expect(isRefused(answer), `${action.name}: a wrong state answered ${answer.status}, not a 4xx`);
        await expectNoEffect(world, verdict, [verified.sessionId], `${action.name}: after a wrong state landed`);
      }
    },
  },
  {
    id: 'forged.missing-state',
    title:
      'A verified session_id (of any action) without a well-formed state (absent, empty, the true one cut short, or not a state) is refused and runs nothing',
    fix: LANDING_FIX,
    phase: 'concurrent',
    async run(world, verdict) {
      for (const action of world.options.actions) {
        const user = await world.signIn();
        const verified = await world.verified(user, action);
        const id = `session_id=${encodeURIComponent(verified.sessionId)}`;
        // A malformed state must not be "recovered" from the stored one.
        const malformed = [verified.state.slice(0, -1), 'x'].map((state) => `${id}&state=${encodeURIComponent(state)}`);
        for (const query of [id, `${id}&state=`, ...malformed]) {
          const answer = await world.land(user, query);
          verdict.note(`${action.name}: ${describeAnswer(answer)}`);
          verdict.expect(
            isRefused(answer),
            `${action.name}: a landing without a well-formed state answered ${answer.status}, not a 4xx`,
          );
        }
        await expectNoEffect(world, verdict, [verified.sessionId], `${action.name}: after a landing without a state`);
      }
    },
  },
  {
    id: 'forged.tampered-echo',
    title: 'A verified status (of any action) whose echoed state or userRef differs from what was stored runs nothing',
    fix: 'Fulfil only through the kit, which compares the re-read state, userRef and session_id with the stored attempt; never on the status alone.',
    phase: 'concurrent',
    async run(world, verdict) {
      for (const action of world.options.actions) {
        const user = await world.signIn();
        for (const echo of [{ state: randomState() }, { userRef: `someone-else-${world.runId}` }]) {
          const attempt = await world.verified(user, action);
          await world.control.tamperEcho(attempt.sessionId, echo);
          const answer = await world.landOn(user, attempt);
          const field = Object.keys(echo)[0] ?? '';
          verdict.note(`${action.name}: echo ${field} changed: ${describeAnswer(answer)}`);
          verdict.expect(
            answer.status < 300 || answer.status >= 400,
            `${action.name}: a tampered echo was answered with a redirect (${answer.status})`,
          );
          // Counted again at the end of the run too: no one may fulfil it later (a job that grants
          // on the status alone), as the kit's own sweep refuses a tampered echo as well.
          await expectNoEffect(
            world,
            verdict,
            [attempt.sessionId],
            `${action.name}: after the service echoed another ${field}`,
            [attempt.sessionId],
          );
        }
      }
    },
  },
  {
    id: 'forged.unverified',
    title:
      'The true return link of an attempt of any action still pending, or failed, runs nothing: opened, nor its session_id and state posted to the landing as a form',
    fix: 'Never act on arrival at the return URL, by GET or by POST: let the kit re-read the session and fulfil only when the service says verified.',
    phase: 'concurrent',
    async run(world, verdict) {
      // Every action: a landing may act on arrival for one of them only.
      for (const action of world.options.actions) {
        const user = await world.signIn();
        const pending = await world.start(user, action);
        const failed = await world.start(user, action);
        await world.control.completeSession(failed.sessionId, 'failed', 'otp_locked');
        for (const [label, attempt] of [
          ['pending', pending],
          ['failed', failed],
        ] as const) {
          const answer = await world.landOn(user, attempt);
          const what = `${action.name}: the ${label} attempt`;
          verdict.note(`${what}: ${describeAnswer(answer)}`);
          verdict.expect(
            answer.status < 300 || answer.status >= 400,
            `${what}'s landing redirected (${answer.status} -> ${answer.location})`,
          );
          await expectNoEffect(
            world,
            verdict,
            [attempt.sessionId],
            `${action.name}: after the ${label} attempt landed`,
            [attempt.sessionId],
          );
          await expectPostedReturnRunsNothing(world, verdict, user, attempt, what);
        }
      }
    },
  },
];
