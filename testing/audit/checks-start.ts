/**
 * The start route's defences: forged starts (no token, a cross-site request, a foreign Origin) are
 * refused before any session is created, and a burst of starts meets the start limits before the
 * service texts anyone.
 */
import type { Answer } from './agent.ts';
import { isRefused, type AuditCheck, type Verdict } from './check.ts';
import { parseHandoffPage } from './agent.ts';
import type { AuditWorld } from './world.ts';

const CSRF_FIX =
  "Keep the kit's start route as it is: send its token (kit.csrfToken(req)) in the form's hidden _csrf field, and never put a route before it that starts a verification itself.";

/** Sends a forged start and expects a 4xx with no session created and no SMS sent. */
async function refusedStart(world: AuditWorld, verdict: Verdict, what: string, send: () => Promise<Answer>) {
  const before = await world.control.stats();
  const answer = await send();
  const after = await world.control.stats();
  verdict.note(`${what}: answered ${answer.status}; sessions created ${after.creates - before.creates}`);
  verdict.expect(isRefused(answer), `${what} answered ${answer.status}, not a 4xx`);
  verdict.expect(parseHandoffPage(answer.body) === undefined, `${what} was answered with the handoff page`);
  verdict.expect(after.creates === before.creates, `${what} created ${after.creates - before.creates} session(s)`);
  verdict.expect(after.smsSent === before.smsSent, `${what} sent ${after.smsSent - before.smsSent} SMS`);
}

export const startChecks: AuditCheck[] = [
  {
    id: 'csrf.no-token',
    title: 'A start without the token is refused before any session',
    fix: CSRF_FIX,
    phase: 'alone',
    async run(world, verdict) {
      const user = await world.signIn();
      await refusedStart(world, verdict, 'a start without _csrf', () =>
        world.postStart(user, undefined, { token: null }),
      );
      await refusedStart(world, verdict, 'a start with a wrong _csrf', () =>
        world.postStart(user, undefined, { token: `${user.csrf}x` }),
      );
    },
  },
  {
    id: 'csrf.cross-site',
    title: 'A cross-site start (Sec-Fetch-Site: cross-site) is refused, even with the right token',
    fix: CSRF_FIX,
    phase: 'alone',
    async run(world, verdict) {
      const user = await world.signIn();
      await refusedStart(world, verdict, 'a cross-site start', () =>
        world.postStart(user, undefined, {
          headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
        }),
      );
    },
  },
  {
    id: 'csrf.foreign-origin',
    title: 'A start from a foreign Origin is refused, even with the right token',
    fix: CSRF_FIX,
    phase: 'alone',
    async run(world, verdict) {
      const user = await world.signIn();
      const app = new URL(world.options.appOrigin);
      for (const origin of ['https://evil.example', `${app.protocol}//${app.host}.evil.example`]) {
        await refusedStart(world, verdict, `a start from Origin ${origin}`, () =>
          world.postStart(user, undefined, { headers: { origin, 'sec-fetch-site': 'same-site' } }),
        );
      }
    },
  },
  {
    id: 'limits.burst',
    title: 'A burst of starts by one user is refused by the start limits before any SMS',
    fix: "Keep the kit's start limits on (no dangerouslyDisableStartLimits) with budgets smaller than a burst, e.g. the defaults of 10 starts per user an hour.",
    phase: 'alone',
    async run(world, verdict) {
      const user = await world.signIn();
      const before = await world.control.stats();
      const answers = await Promise.all(Array.from({ length: world.options.burstSize }, () => world.postStart(user)));
      const after = await world.control.stats();
      const accepted = answers.filter((a) => a.status === 200 && parseHandoffPage(a.body) !== undefined).length;
      const refused = answers.filter(isRefused);
      const sms = after.smsSent - before.smsSent;
      verdict.note(world.clientAddressNote);
      verdict.note(
        `${answers.length} starts: ${accepted} handed off, ${refused.length} refused (${[...new Set(refused.map((a) => a.status))].join(', ') || 'none'}), ${sms} SMS sent`,
      );
      verdict.expect(refused.length > 0, `all ${answers.length} starts of one user went through`);
      verdict.expect(sms <= accepted, `${sms} SMS for ${accepted} accepted starts: a refused start still texted`);
      verdict.expect(
        after.creates - before.creates === accepted,
        `${after.creates - before.creates} sessions for ${accepted} accepted starts`,
      );
    },
  },
];
