/**
 * Open redirects: a URL taken from a query parameter or a header of the start or the landing must
 * never become a Location. Every redirect the app answers (a Location, a Refresh header or a meta
 * refresh, followed on the app's own origin a few hops) must stay on the app's origin and carry none
 * of the planted values, and no page on the way may carry one in a script, or in a link or form
 * leaving the origin (a redirect by script), nor in a form on the origin whose route, submitted,
 * redirects off it.
 */
import { metaRefreshContent } from '../html.ts';
import type { Answer, Headers } from './agent.ts';
import { describeAnswer, MAX_HOPS, type AuditCheck, type Verdict } from './check.ts';
import { submitPlantedForms } from './form-exits.ts';
import { loadedExitWithPlant } from './loaded-exits.ts';
import { plantedExit } from './page-exits.ts';
import { pagePlantedUrlRead } from './url-reads.ts';
import type { AuditAction } from './options.ts';
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
  'redirect_to',
  'redirect_url',
  'return_url',
  'next_url',
  'nextUrl',
  'return',
  'r',
  'callback',
  'from',
  'success_url',
  // Names frameworks read (Auth.js, Supabase and Remix, ASP.NET); Express's query names are case-sensitive.
  'callbackUrl',
  'callback_url',
  'redirectTo',
  'ReturnUrl',
  'returnPath',
  'continueUrl',
  'successUrl',
  'next_page',
  // Names link redirectors and sign-in flows read: `to` and `go` (`/out?to=`), `redirectUri`
  // (MSAL, Keycloak's adapters), SAML's `RelayState`, Redmine's `back_url`, and more in the wild.
  'to',
  'go',
  'redirectUri',
  'forward',
  'location',
  'RelayState',
  'redir',
  'return_path',
  'back_url',
];

/**
 * The values planted: another site (absolute, scheme-relative, and with the backslash a browser
 * reads as a slash), a script URL, two that start with the app's own origin yet name another host
 * (a "starts with our origin" test lets them through), and a host that ends with the app's (an
 * "ends with our host" test lets it through).
 */
export function plantedValues(world: AuditWorld): string[] {
  const { appOrigin } = world.options;
  const { protocol, host } = new URL(appOrigin);
  return [
    `${protocol}//evil${host}/audit`,
    'https://evil.example/audit',
    '//evil.example/audit',
    '/\\evil.example/audit',
    'javascript:alert(1)',
    `${appOrigin}@evil.example/audit`,
    `${appOrigin}.evil.example/audit`,
  ];
}

/**
 * What a page's script, or a link or form leaving the app, must not carry: each planted value, and
 * the planted host as a URL names it (a header's evil.example, a value rebuilt around it).
 */
export function plantedMarks(world: AuditWorld): string[] {
  return [...plantedValues(world), '//evil.example'];
}

/**
 * Where `answer`'s page sends the browser with a planted value by a script (its own, a script file
 * on the app's origin it runs, or a frame's page on the app's origin and what that runs, fetched by
 * `user` with `headers`; one carrying it, or reading it from a URL it runs at), or by a link or
 * form off the app's origin (said for evidence), if it does.
 */
export async function exitWithPlant(
  world: AuditWorld,
  user: AuditUser,
  answer: Answer,
  headers: Headers = {},
): Promise<string | undefined> {
  const contentType = answer.headers['content-type'] ?? '';
  const marks = plantedMarks(world);
  const how = ': a script or a link sends the browser there as a redirect does';
  const where = plantedExit(answer.body, contentType, answer.url, world.options.appOrigin, marks);
  if (where !== undefined) return `${where} of the page carries a planted value${how}`;
  if (!/text\/html/i.test(contentType)) return undefined;
  // The page's URL as requested: a script of its own reading a planted value there redirects to it.
  const read = pagePlantedUrlRead(answer.body, [answer.url], marks);
  if (read !== undefined) {
    return `${read.by} of the page reads its URL, which carries a planted value (${read.read}), and sends the browser on by it${how}`;
  }
  const loaded = await loadedExitWithPlant(world, user, answer, marks, headers);
  if (loaded !== undefined) return `${loaded}${how}`;
  for (const { form, answer: submitted } of await submitPlantedForms(world, user, answer, marks, headers)) {
    const target = nextTarget(submitted);
    const bad = target === undefined ? undefined : offending(world, target, submitted.url);
    if (bad !== undefined) {
      return `${form} of the page carries a planted value, and submitted as a script or the user does, is sent on to ${target}, which ${bad}`;
    }
  }
  return undefined;
}

/**
 * Headers an app may build a redirect from: the host a proxy forwards, and the page the browser
 * came from. (Host itself is not forged: the audit's client would then also name that host to TLS,
 * and a real proxy would route the request to another site.)
 */
const PLANTED_HEADERS: Headers = { 'x-forwarded-host': 'evil.example', referer: 'https://evil.example/audit' };

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

const PLANT = /evil\.example|javascript:/i;

/**
 * Why a redirect to `location` is an exit, if it is: one off the app's origin. One on it carrying a
 * planted value along (a language or trailing-slash redirect keeping the query) is followed: where
 * it leads is judged.
 */
function offending(world: AuditWorld, location: string, base: string): string | undefined {
  const target = world.resolve(location, base);
  if (target.origin === world.options.appOrigin) return undefined;
  return PLANT.test(location) ? 'carries a planted value' : "leaves the app's origin";
}

/** The URL a Refresh header or `<meta http-equiv="refresh">` sends the browser on to, if it names one. */
function refreshTarget(answer: Answer): string | undefined {
  // The tag read as a browser reads it: `content=0;url=...` unquoted is obeyed as well.
  const refresh = answer.headers.refresh ?? metaRefreshContent(answer.body);
  const url = /^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?["']?([^"']*)/i.exec(refresh ?? '')?.[1]?.trim();
  return url === '' ? undefined : url;
}

/** Where the browser goes on from an answer by itself: a redirect's Location, or a refresh's URL. */
export function nextTarget(answer: Answer): string | undefined {
  if (answer.status >= 300 && answer.status < 400) return answer.location ?? undefined;
  return refreshTarget(answer);
}

/**
 * Follows same-origin redirects and refreshes with the user's cookies (and `headers`), judging every
 * target (the hop is said).
 */
async function judgeRedirects(
  world: AuditWorld,
  verdict: Verdict,
  user: AuditUser,
  first: Answer,
  what: string,
  headers: Headers = {},
) {
  let answer = first;
  for (let hop = 0; hop <= MAX_HOPS; hop++) {
    const exit = await exitWithPlant(world, user, answer, headers);
    if (!verdict.expect(exit === undefined, `${what}, hop ${hop + 1}: ${exit} (${describeAnswer(answer)})`)) return;
    const target = nextTarget(answer);
    if (target === undefined) return;
    const bad = offending(world, target, answer.url);
    const how = answer.location === target ? 'a redirect' : 'a refresh';
    // Why first: the answer's URL carries every planted name, and evidence lines are cut.
    const why = `${what}, hop ${hop + 1}: ${how} to ${target} ${bad} (${describeAnswer(answer)})`;
    if (!verdict.expect(bad === undefined, why)) return;
    answer = await user.agent.request(world.resolve(target, answer.url).href, {
      headers: { referer: answer.url, ...headers },
    });
  }
  // Past the hops followed, a redirect still carrying a planted value may yet leave (a browser follows on).
  const still = nextTarget(answer);
  verdict.expect(
    still === undefined || !PLANT.test(still),
    `${what}: still redirecting after ${MAX_HOPS + 1} hops, to ${still} carrying a planted value`,
  );
}

/** A start's plant: where, and how a user's start of the action carries `value` there. */
type StartPlant = [string, (user: AuditUser, value: string, action: AuditAction) => Promise<Answer>];

/** Where redirect.start plants a value: the start's query, its form's fields, a page visited before it (judged on the way). */
function startPlants(world: AuditWorld, verdict: Verdict): StartPlant[] {
  return [
    ['query', (user, value, action) => world.postStart(user, action, { query: plantedQuery(value) })],
    ['form fields', (user, value, action) => world.postStart(user, action, { fields: plantedFields(value) })],
    [
      'a page visited before it',
      async (user, value, action) => {
        for (const path of pagesBeforeStart(world)) {
          // The page itself may send a signed-in user on to its ?next= (a sign-in page does).
          const page = await user.agent.request(`${path}?${plantedQuery(value)}`);
          await judgeRedirects(world, verdict, user, page, `${path} with ${REDIRECT_PARAMS.length} names = ${value}`);
        }
        return world.postStart(user, action);
      },
    ],
  ];
}

export const redirectChecks: AuditCheck[] = [
  {
    id: 'redirect.start',
    title:
      "No parameter of the start of any action (its query or its form's fields), of a page visited before it, or header of the start (X-Forwarded-Host, Referer) becomes a redirect or a refresh: on that page, or at any hop after the landing (each action has its own success page)",
    fix: "Never redirect to a URL taken from a parameter, a header or state, nor to one your session remembered from such a parameter: the kit posts to the service's verifyUrl and lands at fixed successPaths.",
    phase: 'concurrent',
    async run(world, verdict) {
      const plants = startPlants(world, verdict);
      let service: string | undefined;
      /** One start of `action` and the landing after it; `headers` go with every request of both. */
      const tryStart = async (
        action: AuditAction,
        what: string,
        send: (user: AuditUser) => Promise<Answer>,
        headers: Headers = {},
      ) => {
        // One user per try: the kit allows a phone number five texts in ten minutes.
        const user = await world.signIn();
        service ??= new URL((await world.start(user, action)).verifyUrl).origin;
        const answer = await send(user);
        verdict.note(`${what}: answered ${answer.status}`);
        await judgeRedirects(world, verdict, user, answer, `start with ${what}`, headers);
        const started = answer.status === 200 ? await world.attemptOf(answer).catch(() => undefined) : undefined;
        if (started === undefined) return;
        verdict.expect(
          new URL(started.verifyUrl).origin === service,
          `the handoff form posts to ${started.verifyUrl}, not the service (${service})`,
        );
        // A value remembered at the start and used after the landing is an open redirect too.
        await world.control.completeSession(started.sessionId, 'verified');
        const landing = await world.landOn(user, started, '', headers);
        await judgeRedirects(world, verdict, user, landing, `the landing after ${what}`, headers);
      };
      for (const action of world.options.actions) {
        for (const [where, send] of plants) {
          for (const value of plantedValues(world)) {
            await tryStart(
              action,
              `${action.name}: ${REDIRECT_PARAMS.length} names in the ${where} = ${value}`,
              (user) => send(user, value, action),
            );
          }
        }
        await tryStart(
          action,
          `${action.name}: X-Forwarded-Host and Referer naming evil.example`,
          (user) => world.postStart(user, action, { headers: PLANTED_HEADERS }),
          PLANTED_HEADERS,
        );
      }
    },
  },
  {
    id: 'redirect.landing',
    title:
      'No query parameter, header (X-Forwarded-Host, Referer) or state of the landing of any action becomes a redirect, whether the landing succeeds or fails (each action has its own success page)',
    fix: "Never redirect to a URL taken from a parameter, a header or state, whether the verification succeeded or not: send the user to the action's fixed successPath (the kit does), and show a failed or unknown return the kit's page or one at a fixed path.",
    phase: 'concurrent',
    async run(world, verdict) {
      // Each value on an attempt's first landing, then on it replayed: an app may send the user on
      // to its ?next= only once (its success page reading takeLanded's fulfilment: 'first').
      // One user per value: the kit allows a phone number five texts in ten minutes.
      // Every action: each has its own success page (its successPath).
      const land = async (action: AuditAction, what: string, extra: string, headers: Headers = {}) => {
        const user = await world.signIn();
        const attempt = await world.verified(user, action);
        for (const landing of ['first landing', 'replay']) {
          const answer = await world.landOn(user, attempt, extra, headers);
          verdict.note(`${action.name}: ${what}, ${landing}: answered ${answer.status} -> ${answer.location}`);
          await judgeRedirects(world, verdict, user, answer, `${action.name}: ${landing} with ${what}`, headers);
        }
      };
      // A landing that fails too: an app may send a failed or unknown return "back where the user
      // was" (around the kit's failure page, in its error handler), a redirect a verified landing
      // never shows. One failed attempt per action (its failure page offers that action again),
      // landed as it returns and with a state no attempt has: the planted value itself.
      const landFailed = async (action: AuditAction) => {
        const user = await world.signIn();
        const attempt = await world.start(user, action);
        await world.control.completeSession(attempt.sessionId, 'failed', 'otp_locked');
        const returned = new URL(attempt.returnLocation).search.slice(1);
        const unknownState = (state: string) =>
          `session_id=${encodeURIComponent(attempt.sessionId)}&state=${encodeURIComponent(state)}`;
        const judge = async (what: string, query: string, headers: Headers = {}) => {
          const answer = await world.land(user, query, headers);
          verdict.note(`${action.name}: ${what}: answered ${answer.status} -> ${answer.location}`);
          await judgeRedirects(world, verdict, user, answer, `${action.name}: ${what}`, headers);
        };
        for (const value of plantedValues(world)) {
          const planted = `${REDIRECT_PARAMS.length} parameters = ${value}`;
          await judge(`failed landing with ${planted}`, `${returned}&${plantedQuery(value)}`);
          await judge(`landing with state and ${planted}`, `${unknownState(value)}&${plantedQuery(value)}`);
        }
        const headers = 'X-Forwarded-Host and Referer naming evil.example';
        await judge(`failed landing with ${headers}`, returned, PLANTED_HEADERS);
        await judge(`landing with an unknown state and ${headers}`, unknownState('unknown'), PLANTED_HEADERS);
      };
      for (const action of world.options.actions) {
        for (const value of plantedValues(world)) {
          await land(action, `${REDIRECT_PARAMS.length} parameters = ${value}`, `&${plantedQuery(value)}`);
        }
        await land(action, 'X-Forwarded-Host and Referer naming evil.example', '', PLANTED_HEADERS);
        await landFailed(action);
      }
    },
  },
];
