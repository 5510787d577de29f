/**
 * Landings that are real but repeated, moved or late: a replay after success, the link opened in
 * another browser, a reload storm of concurrent landings, and an older verified attempt arriving
 * after a newer one. The action runs exactly once, for its owner (as far as an entered number shows
 * whose it is), and never for a stale intent; another browser is shown nothing of the owner and is
 * not signed in as them.
 */
import { describeAnswer, type AuditCheck, type Verdict } from './check.ts';
import { startsAsVictim } from './checks-fixation.ts';
import { nextTarget } from './checks-redirect.ts';
import type { AuditAction } from './options.ts';
import { showsNumber } from './typed-number-places.ts';
import { digitsOf, type AuditWorld } from './world.ts';

/**
 * What `text` shows of an attempt's owner, named for evidence: the name they signed in with (as a
 * word: `audit…1` is not in `audit…12`), or the number they typed in any spelling; else undefined.
 */
function ownerShown(name: string, phone: string | undefined): (text: string) => string | undefined {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const asWord = new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'iu');
  const showsTyped = phone === undefined ? () => false : showsNumber(phone);
  return (text) =>
    asWord.test(text) ? "its owner's name" : showsTyped(text) ? 'the number its owner typed' : undefined;
}

const ONCE_FIX =
  "Put the action's effect inside the kit's fulfil(tx, attempt) on the transaction handle it gets, so the effect and the kit's mark commit together once per sessionId; do not act in a success page or a hook.";

export const replayChecks: AuditCheck[] = [
  {
    id: 'replay.after-success',
    title: 'A landing replayed after success (of any action) runs nothing more',
    fix: ONCE_FIX,
    phase: 'concurrent',
    async run(world, verdict) {
      for (const action of world.options.actions) {
        const user = await world.signIn();
        const attempt = await world.verified(user, action);
        const first = await world.landOn(user, attempt);
        verdict.note(`${action.name}: first: ${describeAnswer(first)}`);
        verdict.expect(
          first.status >= 300 && first.status < 400,
          `${action.name}: the first landing answered ${first.status}, not a redirect to the action's page`,
        );
        verdict.expect(
          (await world.effects(attempt.sessionId)) === 1,
          `${action.name}: the first landing did not run the action once`,
        );
        for (let i = 0; i < 3; i++) {
          const again = await world.landOn(user, attempt);
          verdict.expect(again.status < 500, `${action.name}: replay ${i + 1} answered ${again.status}`);
        }
        const count = await world.effects(attempt.sessionId);
        verdict.note(`${action.name}: effects after 1 landing and 3 replays: ${count}`);
        verdict.expect(count === 1, `${action.name}: the action ran ${count} times after 3 replays (expected 1)`);
        verdict.countAgainLater(attempt.sessionId, 1, `${action.name}: after 1 landing and 3 replays`);
      }
    },
  },
  {
    id: 'replay.other-browser',
    title:
      "The return link of any action opened in another browser (another user, or nobody signed in) is not sent on and shows nothing of its owner (their name, the number they typed), does not sign it in as its owner, and runs the action once; a typed number becomes its owner's, never that browser's user's",
    fix: "Show the outcome only to the attempt's own user (the kit's landing does); run the action for attempt.userRef, never for whoever is signed in; never sign in the browser that lands.",
    phase: 'concurrent',
    async run(world, verdict) {
      for (const action of world.options.actions) await otherBrowser(world, verdict, action);
    },
  },
  {
    id: 'replay.storm',
    title: 'A reload storm (concurrent landings of one verified attempt, of any action) runs the action exactly once',
    fix: ONCE_FIX,
    phase: 'concurrent',
    async run(world, verdict) {
      for (const action of world.options.actions) {
        const user = await world.signIn();
        const attempt = await world.verified(user, action);
        const answers = await Promise.all(
          Array.from({ length: world.options.stormSize }, () => world.landOn(user, attempt)),
        );
        const statuses = [...new Set(answers.map((a) => a.status))].join(', ');
        verdict.note(`${action.name}: ${answers.length} concurrent landings answered ${statuses}`);
        verdict.expect(
          answers.every((a) => a.status < 500),
          `${action.name}: some concurrent landings answered ${statuses}`,
        );
        const count = await world.effects(attempt.sessionId);
        verdict.note(`${action.name}: effects: ${count}`);
        verdict.expect(
          count === 1,
          `${action.name}: the action ran ${count} times for ${answers.length} concurrent landings (expected 1)`,
        );
        verdict.countAgainLater(attempt.sessionId, 1, `${action.name}: after ${answers.length} concurrent landings`);
      }
    },
  },
  {
    id: 'stale-intent',
    title:
      "An older verified attempt landing after a newer one of the same action runs nothing (each action but those of ordering 'independent')",
    fix: "Keep the action's ordering 'latest' (the default) so the kit supersedes an older attempt once a newer one was fulfilled, and keep the effect inside fulfil(); tell the audit an action's `ordering: 'independent'` only when every verified attempt must apply.",
    phase: 'concurrent',
    async run(world, verdict) {
      const latest = world.options.actions.filter((action) => action.ordering !== 'independent');
      for (const action of world.options.actions) {
        if (action.ordering === 'independent')
          verdict.note(`${action.name}: ordering 'independent', every verified attempt applies`);
      }
      if (latest.length === 0) {
        verdict.notRun = "every action of `actions` has ordering 'independent': no older attempt is superseded";
        return;
      }
      for (const action of latest) {
        const user = await world.signIn();
        const older = await world.verified(user, action);
        const newer = await world.verified(user, action);
        const landNewer = await world.landOn(user, newer);
        const landOlder = await world.landOn(user, older);
        verdict.note(`${action.name}: newer: ${describeAnswer(landNewer)}; older: ${describeAnswer(landOlder)}`);
        verdict.expect(
          (await world.effects(newer.sessionId)) === 1,
          `${action.name}: the newer attempt did not run once`,
        );
        const stale = await world.effects(older.sessionId);
        verdict.expect(stale === 0, `${action.name}: the older attempt ran ${stale} time(s) after the newer one`);
        verdict.countAgainLater(older.sessionId, 0, `${action.name}: the older attempt, landed after the newer one`);
        verdict.expect(
          landOlder.status < 300 || landOlder.status >= 400,
          `${action.name}: the older attempt's landing redirected to ${landOlder.location}`,
        );
      }
    },
  },
];

/**
 * replay.other-browser for one action: its return link opened by another user and by nobody, then
 * its owner; last, each other browser starts the action, to see whom its landing signed it in as.
 */
async function otherBrowser(world: AuditWorld, verdict: Verdict, action: AuditAction): Promise<void> {
  const owner = await world.signIn();
  const phone = action.enteredNumber === undefined ? undefined : world.newNumber();
  const attempt = await world.attemptOf(await world.postStart(owner, action, { phone }));
  const location = await world.walkHostedPage(owner, attempt);
  const other = await world.signIn();
  const shown = ownerShown(owner.name, phone);
  const browsers = [
    ['another user', other.agent, other.csrf],
    ['no session', world.agent(), undefined],
  ] as const;
  for (const [label, agent] of browsers) {
    const answer = await agent.request(location);
    verdict.note(`${action.name}: ${label}: ${describeAnswer(answer)}`);
    // A refresh sends the browser on as a redirect does.
    const sentOn = nextTarget(answer);
    verdict.expect(sentOn === undefined, `${action.name}: ${label}'s browser was sent on to ${sentOn}`);
    const what = shown(answer.body);
    verdict.expect(what === undefined, `${action.name}: ${label}'s browser was shown ${what}`);
  }
  const own = await owner.agent.request(location);
  verdict.note(`${action.name}: owner: ${describeAnswer(own)}`);
  verdict.expect(
    own.status >= 300 && own.status < 400,
    `${action.name}: the owner's own landing answered ${own.status}, not the redirect to the action's page`,
  );
  const count = await world.effects(attempt.sessionId);
  verdict.expect(
    count === 1,
    `${action.name}: the action ran ${count} times after landings in three browsers (expected 1)`,
  );
  if (phone === undefined) {
    verdict.note(`who the action ran for is not seen: ${action.name} has no enteredNumber`);
  } else {
    const typed = digitsOf(phone);
    const othersNumber = await world.numberOf(action, other);
    verdict.expect(othersNumber !== typed, `${action.name} made the owner's typed number the other user's`);
    const ownersNumber = await world.numberOf(action, owner);
    verdict.expect(ownersNumber === typed, `${action.name} did not make the typed number its owner's`);
  }
  // A landing may sign its browser in once the kit has answered. The starts come after the numbers
  // are read: an app may keep the number typed at a start.
  for (const [label, agent, token] of browsers) {
    const browser = { agent, token, label: `${action.name}: ${label}'s browser, after the landing` };
    const signedIn = await startsAsVictim(world, verdict, browser, owner, { userRef: attempt.userRef, phone, action });
    verdict.expect(!signedIn, `${action.name}: the landing signed ${label}'s browser in as the owner`);
  }
}
