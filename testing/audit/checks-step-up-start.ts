/**
 * Actions whose start requires a step-up (`requireRecentVerification` on the action, given to the
 * audit on its `actions` entry): guarding the page that shows the form guards nothing, since
 * anyone holding the session can post to the start route; only the start's own step-up does.
 */
import { parseHandoffPage } from './agent.ts';
import { describeAnswer, isRefused, type AuditCheck, type Verdict } from './check.ts';
import { callHook } from './hooks.ts';
import type { AuditAction } from './options.ts';
import { confirmItsYouForm } from './start-grant.ts';
import { grantAndOpen, grantBeforeStart, routeMethod } from './step-up-flow.ts';
import type { AuditUser, AuditWorld } from './world.ts';

const NOT_GIVEN =
  "no action of `actions` has `requireRecentVerification`: give it for the actions whose start requires a step-up, as your kit has it, e.g. { name: 'change_phone', requireRecentVerification: { scope: 'account', maxAge: 600 } }";

/** Posts the action's start and expects it to start nothing: no session created, no SMS sent. */
async function expectStartedNothing(
  world: AuditWorld,
  verdict: Verdict,
  user: AuditUser,
  action: AuditAction,
  why: string,
): Promise<void> {
  const before = await world.control.stats();
  const answer = await world.postStart(user, action, { asIs: true });
  const after = await world.control.stats();
  const [created, sent] = [after.creates - before.creates, after.smsSent - before.smsSent];
  verdict.note(`${action.name} ${why}: ${describeAnswer(answer)}`);
  verdict.expect(
    parseHandoffPage(answer.body) === undefined &&
      (confirmItsYouForm(world, answer) !== undefined || isRefused(answer)),
    `${action.name} started ${why}: ${describeAnswer(answer)}, not the "Confirm it’s you" page or a 4xx`,
  );
  verdict.expect(
    created === 0 && sent === 0,
    `${action.name} ${why}: ${created} session(s) created and ${sent} SMS sent`,
  );
}

export const stepUpStartChecks: AuditCheck[] = [
  {
    id: 'step-up.action-start',
    title:
      "An action that requires a step-up cannot be started without one: a start posted without a fresh grant of its scope in this browser (none, another browser's, another scope's, one past maxAge) creates no session and sends no SMS",
    fix: "Give the action requireRecentVerification: { scope, maxAge } in createVerificationKit (guarding the page that shows its form guards nothing: the start route takes a post from anyone holding the session), and start it only through the kit's start route.",
    phase: 'alone',
    async run(world, verdict) {
      const actions = world.options.actions.flatMap((action) => {
        const stepUp = action.requireRecentVerification;
        return stepUp === undefined ? [] : [{ action, ...stepUp }];
      });
      if (actions.length === 0) verdict.notRun = NOT_GIVEN;
      const clock = world.options.clock ?? world.options.sweep?.clock;
      for (const { action, scope, maxAge } of actions) {
        const user = await world.signIn();
        await expectStartedNothing(world, verdict, user, action, 'without a grant');
        const elsewhere = await world.signIn(user.name, world.agent());
        await grantBeforeStart(world, elsewhere, action);
        await expectStartedNothing(world, verdict, user, action, 'with a grant made in another browser of its user');
        const otherScope = (world.options.stepUp ?? []).find(
          (route) => route.scope !== scope && routeMethod(route) === 'GET' && route.resource !== true,
        );
        if (otherScope !== undefined) {
          await grantAndOpen(world, user, otherScope, 1);
          await expectStartedNothing(world, verdict, user, action, `with a grant of scope ${otherScope.scope} only`);
        } else {
          verdict.note(
            `${action.name} with a grant of another scope: not tried (no GET route of \`stepUp\` of another scope, without \`resource\`)`,
          );
        }
        // Its own grant opens it: otherwise what precedes proves nothing.
        await grantBeforeStart(world, user, action);
        const granted = await world.postStart(user, action, { asIs: true });
        verdict.note(`${action.name} with a fresh grant of scope ${scope}: ${describeAnswer(granted)}`);
        verdict.expect(
          granted.status === 200 && parseHandoffPage(granted.body) !== undefined,
          `${action.name} did not start with a fresh grant of scope ${scope}: ${describeAnswer(granted)}`,
        );
        if (clock === undefined) {
          verdict.note('no `clock` given: a grant past maxAge was not tried');
          continue;
        }
        await callHook('your clock.advance', world.options.timeoutMs, () => clock.advance({ seconds: maxAge + 1 }));
        await expectStartedNothing(world, verdict, user, action, `${maxAge + 1} s after the grant`);
      }
    },
  },
];
