/**
 * Open redirects: a URL taken from a query parameter of the start or the landing must never become
 * a Location. Every redirect the app answers (followed on the app's own origin a few hops) must stay
 * on the app's origin and carry none of the planted values.
 */
import type { Answer } from './agent.ts';
import { describeAnswer, MAX_HOPS, type AuditCheck, type Verdict } from './check.ts';
import type { AuditUser, AuditWorld } from './world.ts';

/** The names apps read a "where next" from. */
export const REDIRECT_PARAMS = [
  'next',
  'returnTo',
  'return_to',
  'returnUrl',
  'redirect',
  'redirect_uri',
  'redirectUrl',
  'url',
  'continue',
  'successPath',
  'goto',
  'dest',
  'destination',
  'target',
  'back',
];

const PLANTED = ['https://evil.example/audit', '//evil.example/audit', '/\\evil.example/audit', 'javascript:alert(1)'];

function plantedQuery(value: string): string {
  return REDIRECT_PARAMS.map((name) => `${name}=${encodeURIComponent(value)}`).join('&');
}

function plantedFields(value: string): Record<string, string> {
  return Object.fromEntries(REDIRECT_PARAMS.map((name) => [name, value]));
}

/** Pages a user sees before starting, where an app may remember a "where next": home and the sign-in page. */
function pagesBeforeStart(world: AuditWorld): string[] {
  const { signIn } = world.options;
  const paths = ['/', ...(typeof signIn === 'function' ? [] : [signIn.path, signIn.csrfFrom ?? '/'])];
  return [...new Set(paths)];
}

function offending(world: AuditWorld, location: string, base: string): string | undefined {
  if (/evil\.example|javascript:/i.test(location)) return `carries a planted value: ${location}`;
  const target = world.resolve(location, base);
  if (target.origin !== world.options.appOrigin) return `leaves the app's origin: ${location}`;
  return undefined;
}

/** Follows same-origin redirects with the user's cookies, judging every Location (the hop is said). */
async function judgeRedirects(world: AuditWorld, verdict: Verdict, user: AuditUser, first: Answer, what: string) {
  let answer = first;
  for (let hop = 0; hop <= MAX_HOPS && answer.location !== null && answer.status >= 300 && answer.status < 400; hop++) {
    const bad = offending(world, answer.location, answer.url);
    if (!verdict.expect(bad === undefined, `${what}, hop ${hop + 1}: ${describeAnswer(answer)} ${bad}`)) return;
    answer = await user.agent.request(world.resolve(answer.location, answer.url).href, {
      headers: { referer: answer.url },
    });
  }
}

export const redirectChecks: AuditCheck[] = [
  {
    id: 'redirect.start',
    title:
      "No parameter of the start (its query or its form's fields), or of a page visited before it, becomes a redirect at any hop after the landing",
    fix: "Never redirect to a URL taken from a parameter, a header or state, nor to one your session remembered from such a parameter: the kit posts to the service's verifyUrl and lands at fixed successPaths.",
    phase: 'concurrent',
    async run(world, verdict) {
      const plants: [string, (user: AuditUser, value: string) => Promise<Answer>][] = [
        ['query', (user, value) => world.postStart(user, undefined, { query: plantedQuery(value) })],
        ['form fields', (user, value) => world.postStart(user, undefined, { fields: plantedFields(value) })],
        [
          'a page visited before it',
          async (user, value) => {
            for (const path of pagesBeforeStart(world)) await user.agent.request(`${path}?${plantedQuery(value)}`);
            return world.postStart(user);
          },
        ],
      ];
      let service: string | undefined;
      for (const [where, send] of plants) {
        // One user per place: the kit allows a phone number five texts in ten minutes.
        const user = await world.signIn();
        service ??= new URL((await world.start(user)).verifyUrl).origin;
        for (const value of PLANTED.slice(0, 2)) {
          const answer = await send(user, value);
          verdict.note(`${REDIRECT_PARAMS.length} names in the ${where} = ${value}: answered ${answer.status}`);
          await judgeRedirects(world, verdict, user, answer, `start with ${value} in the ${where}`);
          const started = answer.status === 200 ? await world.attemptOf(answer).catch(() => undefined) : undefined;
          if (started === undefined) continue;
          verdict.expect(
            new URL(started.verifyUrl).origin === service,
            `the handoff form posts to ${started.verifyUrl}, not the service (${service})`,
          );
          // A value remembered at the start and used after the landing is an open redirect too.
          await world.control.completeSession(started.sessionId, 'verified');
          const landing = await world.landOn(user, started);
          await judgeRedirects(world, verdict, user, landing, `the landing after ${value} in the ${where}`);
        }
      }
    },
  },
  {
    id: 'redirect.landing',
    title: 'No query parameter of the landing becomes a redirect',
    fix: "Never redirect to a URL taken from a parameter, a header or state: send the user to the action's fixed successPath (the kit does).",
    phase: 'concurrent',
    async run(world, verdict) {
      const user = await world.signIn();
      const attempt = await world.verified(user);
      for (const value of PLANTED) {
        const answer = await world.landOn(user, attempt, `&${plantedQuery(value)}`);
        verdict.note(
          `${REDIRECT_PARAMS.length} parameters = ${value}: answered ${answer.status} -> ${answer.location}`,
        );
        await judgeRedirects(world, verdict, user, answer, `landing with ${value}`);
      }
    },
  },
];
