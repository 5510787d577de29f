/**
 * Landings that are real but repeated, moved or late: a replay after success, the link opened in
 * another browser, a reload storm of concurrent landings, and an older verified attempt arriving
 * after a newer one. The action runs exactly once for its owner, and never for a stale intent.
 */
import { describeAnswer, type AuditCheck } from './check.ts';

const ONCE_FIX =
  "Put the action's effect inside the kit's fulfil(tx, attempt) on the transaction handle it gets, so the effect and the kit's mark commit together once per sessionId; do not act in a success page or a hook.";

export const replayChecks: AuditCheck[] = [
  {
    id: 'replay.after-success',
    title: 'A landing replayed after success runs nothing more',
    fix: ONCE_FIX,
    phase: 'concurrent',
    async run(world, verdict) {
      const user = await world.signIn();
      const attempt = await world.verified(user);
      const first = await world.landOn(user, attempt);
      verdict.note(`first: ${describeAnswer(first)}`);
      verdict.expect(
        first.status >= 300 && first.status < 400,
        `the first landing answered ${first.status}, not a redirect to the action's page`,
      );
      verdict.expect((await world.effects(attempt.sessionId)) === 1, 'the first landing did not run the action once');
      for (let i = 0; i < 3; i++) {
        const again = await world.landOn(user, attempt);
        verdict.expect(again.status < 500, `replay ${i + 1} answered ${again.status}`);
      }
      const count = await world.effects(attempt.sessionId);
      verdict.note(`effects after 1 landing and 3 replays: ${count}`);
      verdict.expect(count === 1, `the action ran ${count} times after 3 replays (expected 1)`);
    },
  },
  {
    id: 'replay.other-browser',
    title:
      'The return link opened in another browser (another user, or nobody signed in) shows nothing and runs the action once, for its owner',
    fix: "Show the outcome only to the attempt's own user (the kit's landing does); run the action for attempt.userRef, never for whoever is signed in.",
    phase: 'concurrent',
    async run(world, verdict) {
      const owner = await world.signIn();
      const attempt = await world.start(owner);
      const location = await world.walkHostedPage(owner, attempt);
      const other = await world.signIn();
      const nobody = world.agent();
      for (const [label, agent] of [
        ['another user', other.agent],
        ['no session', nobody],
      ] as const) {
        const answer = await agent.request(location);
        verdict.note(`${label}: ${describeAnswer(answer)}`);
        verdict.expect(
          answer.status < 300 || answer.status >= 400,
          `${label}'s browser was redirected to ${answer.location}`,
        );
      }
      const own = await owner.agent.request(location);
      verdict.note(`owner: ${describeAnswer(own)}`);
      verdict.expect(
        own.status >= 300 && own.status < 400,
        `the owner's own landing answered ${own.status}, not the redirect to the action's page`,
      );
      const count = await world.effects(attempt.sessionId);
      verdict.expect(count === 1, `the action ran ${count} times after landings in three browsers (expected 1)`);
    },
  },
  {
    id: 'replay.storm',
    title: 'A reload storm (concurrent landings of one verified attempt) runs the action exactly once',
    fix: ONCE_FIX,
    phase: 'concurrent',
    async run(world, verdict) {
      const user = await world.signIn();
      const attempt = await world.verified(user);
      const answers = await Promise.all(
        Array.from({ length: world.options.stormSize }, () => world.landOn(user, attempt)),
      );
      const statuses = [...new Set(answers.map((a) => a.status))].join(', ');
      verdict.note(`${answers.length} concurrent landings answered ${statuses}`);
      verdict.expect(
        answers.every((a) => a.status < 500),
        `some concurrent landings answered ${statuses}`,
      );
      const count = await world.effects(attempt.sessionId);
      verdict.note(`effects: ${count}`);
      verdict.expect(
        count === 1,
        `the action ran ${count} times for ${answers.length} concurrent landings (expected 1)`,
      );
    },
  },
  {
    id: 'stale-intent',
    title: 'An older verified attempt landing after a newer one of the same action runs nothing',
    fix: "Keep the action's ordering 'latest' (the default) so the kit supersedes an older attempt once a newer one was fulfilled, and keep the effect inside fulfil().",
    phase: 'concurrent',
    async run(world, verdict) {
      const user = await world.signIn();
      const older = await world.verified(user);
      const newer = await world.verified(user);
      const landNewer = await world.landOn(user, newer);
      const landOlder = await world.landOn(user, older);
      verdict.note(`newer: ${describeAnswer(landNewer)}; older: ${describeAnswer(landOlder)}`);
      verdict.expect((await world.effects(newer.sessionId)) === 1, 'the newer attempt did not run once');
      const stale = await world.effects(older.sessionId);
      verdict.expect(stale === 0, `the older attempt ran ${stale} time(s) after the newer one`);
      verdict.expect(
        landOlder.status < 300 || landOlder.status >= 400,
        `the older attempt's landing redirected to ${landOlder.location}`,
      );
    },
  },
];
