/**
 * The start route's defences: forged starts (no token, a cross-site request, a foreign Origin) are
 * refused before any session is created, and a burst of starts meets the start limits before the
 * service texts anyone.
 */
import { randomInt } from 'node:crypto';
import type { Answer } from './agent.ts';
import { describeAnswer, isRefused, type AuditCheck, type Verdict } from './check.ts';
import { parseHandoffPage } from './agent.ts';
import { grantBeforeStart } from './step-up-flow.ts';
import { overrideHeaders } from './method-override.ts';
import type { AuditAction } from './options.ts';
import type { AuditUser, AuditWorld } from './world.ts';

const CSRF_FIX =
  "Keep the kit's start route as it is: send its token (kit.csrfToken(req)) in the form's hidden _csrf field, and never put a route before it that starts a verification itself.";

/** Sends a forged start and expects a 4xx with no session created and no SMS sent. */
async function refusedStart(world: AuditWorld, verdict: Verdict, what: string, send: () => Promise<Answer>) {
  const before = await world.control.stats();
  const answer = await send();
  const after = await world.control.stats();
  verdict.note(`${what}: ${describeAnswer(answer)}; sessions created ${after.creates - before.creates}`);
  verdict.expect(isRefused(answer), `${what}: ${describeAnswer(answer)}, not a 4xx`);
  verdict.expect(parseHandoffPage(answer.body) === undefined, `${what} was answered with the handoff page`);
  verdict.expect(after.creates === before.creates, `${what} created ${after.creates - before.creates} session(s)`);
  verdict.expect(after.smsSent === before.smsSent, `${what} sent ${after.smsSent - before.smsSent} SMS`);
}

/** Sends a request on the start path and expects no session created, no SMS sent and no handoff page (any status). */
async function startedNothing(world: AuditWorld, verdict: Verdict, what: string, send: () => Promise<Answer>) {
  const before = await world.control.stats();
  const answer = await send();
  const after = await world.control.stats();
  verdict.note(`${what}: ${describeAnswer(answer)}`);
  verdict.expect(parseHandoffPage(answer.body) === undefined, `${what} was answered with the handoff page`);
  verdict.expect(after.creates === before.creates, `${what} created ${after.creates - before.creates} session(s)`);
  verdict.expect(after.smsSent === before.smsSent, `${what} sent ${after.smsSent - before.smsSent} SMS`);
}

/** Every method but the form's POST. */
const OTHER_METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
const WITHOUT_BODY = new Set<string>(['GET', 'HEAD', 'OPTIONS']);

/**
 * Origins that are not the app's, with the Sec-Fetch-Site a browser sends from each: another site,
 * one whose name starts with the app's host name, and a sibling subdomain (a taken-over `www.` or
 * user content), which an app trusting "our own subdomains" lets start.
 */
function foreignOrigins(app: URL): [string, string][] {
  const port = app.port === '' ? '' : `:${app.port}`;
  return [
    ['https://evil.example', 'cross-site'],
    [`${app.protocol}//${app.hostname}.evil.example${port}`, 'cross-site'],
    [`${app.protocol}//evil.${app.host}`, 'same-site'],
  ];
}

/**
 * A GET of the start path carrying the form's fields and token, its query (`_method=POST`, as
 * method-override reads it) and override headers naming POST: a method override that turns it into
 * the form's POST lets a link text.
 */
function getOverriddenToPost(world: AuditWorld, user: AuditUser, action: AuditAction): Promise<Answer> {
  const query = new URLSearchParams({ _method: 'POST', _csrf: user.csrf, ...world.fieldsOf(action) }).toString();
  return user.agent.request(`${world.startPath(action)}?${query}`, {
    headers: { ...world.sameOrigin(), ...overrideHeaders('POST') },
  });
}

/**
 * The headers proxies and CDNs put a client's address in, each claiming `address`: an app that
 * reads any of them itself lets a client choose its IP.
 */
function claimedByEveryHeader(address: string): Record<string, string> {
  const names = [
    'x-real-ip',
    'cf-connecting-ip',
    'true-client-ip',
    'x-client-ip',
    'fastly-client-ip',
    'x-cluster-client-ip',
  ];
  return Object.fromEntries(names.map((name) => [name, address]));
}

/** An address on the internet (198.18.0.0/15, set aside for tests): never a real user's. */
function internetAddress(): string {
  return `198.${18 + randomInt(2)}.${randomInt(256)}.${randomInt(1, 255)}`;
}

/** The action the forwarded-address burst starts: one needing no grant when there is one, so no user verifies first. */
function burstAction(world: AuditWorld): AuditAction {
  return world.options.actions.find((action) => action.requireRecentVerification === undefined) ?? world.firstAction();
}

/**
 * `count` users reaching the app through `proxy`, each with the grant a start of `action` needs.
 * Each signs in and verifies from an address of its own (as the proxy appends it), so none of this
 * spends the per-IP budget the burst's client meets.
 */
async function usersBehindProxy(world: AuditWorld, proxy: string | undefined, action: AuditAction, count: number) {
  const users: AuditUser[] = [];
  for (let i = 0; i < count; i++) {
    const user = await world.signIn(undefined, world.agent({ 'x-forwarded-for': internetAddress() }, proxy));
    await grantBeforeStart(world, user, action);
    users.push(user);
  }
  return users;
}

export const startChecks: AuditCheck[] = [
  {
    id: 'csrf.no-token',
    title:
      "A start of any action without its session's token (none, a wrong one, another user's) is refused before any session",
    fix: CSRF_FIX,
    phase: 'alone',
    async run(world, verdict) {
      const user = await world.signIn();
      // A token genuine for the app but not bound to the session: an attacker signs in to get one.
      const other = await world.signIn();
      for (const action of world.options.actions) {
        await refusedStart(world, verdict, `${action.name}: a start without _csrf`, () =>
          world.postStart(user, action, { token: null }),
        );
        await refusedStart(world, verdict, `${action.name}: a start with a wrong _csrf`, () =>
          world.postStart(user, action, { token: `${user.csrf}x` }),
        );
        await refusedStart(world, verdict, `${action.name}: a start with another user's _csrf`, () =>
          world.postStart(user, action, { token: other.csrf }),
        );
      }
    },
  },
  {
    id: 'csrf.cross-site',
    title: 'A cross-site start of any action (Sec-Fetch-Site: cross-site) is refused, even with the right token',
    fix: CSRF_FIX,
    phase: 'alone',
    async run(world, verdict) {
      const user = await world.signIn();
      for (const action of world.options.actions) {
        await refusedStart(world, verdict, `${action.name}: a cross-site start`, () =>
          world.postStart(user, action, {
            headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
          }),
        );
      }
    },
  },
  {
    id: 'csrf.foreign-origin',
    title: 'A start of any action from a foreign Origin is refused, even with the right token',
    fix: CSRF_FIX,
    phase: 'alone',
    async run(world, verdict) {
      const user = await world.signIn();
      for (const action of world.options.actions) {
        for (const [origin, site] of foreignOrigins(new URL(world.options.appOrigin))) {
          await refusedStart(world, verdict, `${action.name}: a start from Origin ${origin}`, () =>
            world.postStart(user, action, { headers: { origin, 'sec-fetch-site': site } }),
          );
        }
      }
    },
  },
  {
    id: 'csrf.methods',
    title:
      'Only the form POST starts: every other method on the start path (even with the token), a GET whose `_method=POST` or X-HTTP-Method-Override names POST, and a cross-site top-level GET naming each action, creates no session and sends no SMS',
    fix: 'Mount nothing else on the start path: no "verify now" GET link, no method override, no route that turns another request into a start; a verification starts only from the kit\'s form POST.',
    phase: 'alone',
    async run(world, verdict) {
      const user = await world.signIn();
      for (const action of world.options.actions) {
        const path = world.startPath(action);
        for (const method of OTHER_METHODS) {
          const form = new URLSearchParams({ _csrf: user.csrf, ...world.fieldsOf(action) }).toString();
          const withBody = !WITHOUT_BODY.has(method);
          await startedNothing(world, verdict, `${method} ${path} (${action.name}, with the token)`, () =>
            user.agent.request(withBody ? path : `${path}?${form}`, {
              method,
              headers: {
                ...world.sameOrigin(),
                ...(withBody ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
              },
              ...(withBody ? { body: form } : {}),
            }),
          );
        }
        await startedNothing(world, verdict, `GET ${path}?_method=POST (${action.name}, with the token)`, () =>
          getOverriddenToPost(world, user, action),
        );
        const link = new URLSearchParams(world.fieldsOf(action)).toString();
        await startedNothing(world, verdict, `a cross-site top-level GET ${path}?action=${action.name}`, () =>
          user.agent.request(`${path}?${link}`, {
            headers: {
              'sec-fetch-site': 'cross-site',
              'sec-fetch-mode': 'navigate',
              'sec-fetch-dest': 'document',
              'sec-fetch-user': '?1',
              referer: 'https://evil.example/',
            },
          }),
        );
      }
    },
  },
  {
    id: 'limits.forwarded-ip',
    title:
      'A client that sends a new address in every header a client address is read from (X-Forwarded-For, Forwarded, X-Real-IP, CF-Connecting-IP, True-Client-IP, ...) with every start still meets the per-IP start limit',
    fix: "Set Express's 'trust proxy' to your own proxies only (their addresses, 'loopback', or their number of hops), never true, and take the client's IP from req.ip alone, never from X-Real-IP, Forwarded, CF-Connecting-IP or another header yourself.",
    phase: 'alone',
    async run(world, verdict) {
      const size = world.options.ipBurstSize;
      // This check plays one client on the internet behind your proxy (on loopback): the proxy
      // appends the client's address to what the client sent, and every browser of the check
      // reaches the app through that one proxy address. A 429 does not say which budget refused
      // it: each start is its own user's first, to its own number, so only the per-IP budget can.
      const client = internetAddress();
      const proxy = world.newClientAddress();
      const action = burstAction(world);
      const users = await usersBehindProxy(world, proxy, action, size);
      const before = await world.control.stats();
      const answers: Answer[] = [];
      for (const user of users) {
        const claimed = internetAddress();
        answers.push(
          await world.postStart(user, action, {
            headers: {
              ...claimedByEveryHeader(claimed),
              'x-forwarded-for': `${claimed}, ${client}`,
              forwarded: `for=${claimed}`,
            },
          }),
        );
      }
      const after = await world.control.stats();
      const accepted = answers.filter((a) => a.status === 200 && parseHandoffPage(a.body) !== undefined).length;
      const refused = answers.filter((a) => a.status === 429).length;
      const sms = after.smsSent - before.smsSent;
      verdict.note(
        `${size} starts of ${action.name} by ${size} users of one client (${client}), one each, each claiming another address: ${accepted} handed off, ${refused} refused with 429, ${sms} SMS sent`,
      );
      verdict.expect(
        refused > 0,
        `all ${accepted} starts went through: the client chose its IP by header, so the per-IP start budget never bound (raise ipBurstSize above your per-IP budget if it is larger than ${size - 1})`,
      );
      verdict.expect(sms <= accepted, `${sms} SMS for ${accepted} accepted starts: a refused start still texted`);
    },
  },
  {
    id: 'limits.burst',
    title: 'A burst of starts by one user is refused by the start limits before any SMS',
    fix: "Keep the kit's start limits on (no dangerouslyDisableStartLimits) with budgets smaller than a burst, e.g. the defaults of 10 starts per user an hour.",
    phase: 'alone',
    async run(world, verdict) {
      const user = await world.signIn();
      await grantBeforeStart(world, user, world.firstAction());
      const before = await world.control.stats();
      const answers = await Promise.all(Array.from({ length: world.options.burstSize }, () => world.postStart(user)));
      const after = await world.control.stats();
      const accepted = answers.filter((a) => a.status === 200 && parseHandoffPage(a.body) !== undefined).length;
      // Only a 429 is the limits answering: a 404 or a 409 of the route refuses a start without any budget.
      const refused = answers.filter((a) => a.status === 429).length;
      const others = answers.filter((a) => isRefused(a) && a.status !== 429).map((a) => a.status);
      const sms = after.smsSent - before.smsSent;
      verdict.note(world.clientAddressNote);
      verdict.note(
        `${answers.length} starts: ${accepted} handed off, ${refused} refused with 429${others.length === 0 ? '' : `, ${others.length} answered ${[...new Set(others)].join(', ')}`}, ${sms} SMS sent`,
      );
      verdict.expect(
        refused > 0,
        `no start of ${answers.length} was refused with 429, the start limits' answer: ${accepted} went through`,
      );
      verdict.expect(sms <= accepted, `${sms} SMS for ${accepted} accepted starts: a refused start still texted`);
      verdict.expect(
        after.creates - before.creates === accepted,
        `${after.creates - before.creates} sessions for ${accepted} accepted starts`,
      );
    },
  },
];
