/**
 * The app's own sign-in must start a new session. The kit keys step-up grants, kept forms and the
 * start token by the browser session: a sign-in that keeps the session id the browser came with
 * lets whoever planted that cookie share the victim's signed-in session afterwards.
 */
import { parseHandoffPage, type AuditAgent } from './agent.ts';
import { describeAnswer, type AuditCheck, type Verdict } from './check.ts';
import { sameCookieAndValue, type StoredCookie } from './cookie-jar.ts';
import { describeThrown } from './hooks.ts';
import type { AuditAction } from './options.ts';
import type { AuditUser, AuditWorld } from './world.ts';

/** The browser's cookies for the app, whatever their path (values stay here: evidence names cookies only). */
function cookiesOf(world: AuditWorld, agent: AuditAgent): StoredCookie[] {
  return agent.jar.heldFor(new URL(world.options.appOrigin));
}

/** Names, with the path where it is not `/` (two cookies may share a name). */
function namesOf(cookies: StoredCookie[]): string {
  return cookies.map((c) => (c.path === '/' ? c.name : `${c.name} (Path=${c.path})`)).join(', ');
}

/** The attacker's browser and the cookies it plants; `token` is its own start token, when it signed in. */
interface Planted {
  agent: AuditAgent;
  cookies: StoredCookie[];
  token?: string;
  /** Which cookies these are, for evidence. */
  what: string;
}

/**
 * What an attacker can plant: the cookies the app's first page (the sign-in form's, or `/`) sets
 * before anyone signs in, and his own, from signing in as himself. Both are tried: a first page
 * that sets a cookie of its own (a language, a consent) says nothing of the session cookie, which
 * the sign-in may keep as the attacker's planted one.
 */
async function attackersCookies(world: AuditWorld, verdict: Verdict): Promise<Planted[]> {
  const { signIn } = world.options;
  const first = typeof signIn === 'function' ? '/' : signIn.path;
  const agent = world.agent();
  await agent.request(first);
  const before = cookiesOf(world, agent);
  verdict.note(`${first} set ${namesOf(before) || 'no cookie'} before any sign-in`);
  const attacker = await world.signIn();
  const own = cookiesOf(world, attacker.agent);
  verdict.note(`the attacker's own sign-in left ${namesOf(own) || 'no cookie'}`);
  return [
    ...(before.length > 0 ? [{ agent, cookies: before, what: `the cookies ${first} set before any sign-in` }] : []),
    ...(own.length > 0
      ? [{ agent: attacker.agent, cookies: own, token: attacker.csrf, what: "the attacker's signed-in cookies" }]
      : []),
  ];
}

/**
 * Starts `victimAttempt`'s action (the first one by default) from an attacker's browser (its own
 * cookies only) with each token it could read from a page of that session, the one its start page
 * shows now too (a sign-in on a new session gives the browser a new one): true when one started a
 * verification for the victim. `label` names the browser in the evidence.
 */
export async function startsAsVictim(
  world: AuditWorld,
  verdict: Verdict,
  browser: { agent: AuditAgent; token?: string; label: string },
  victim: AuditUser,
  victimAttempt: { userRef: string; phone?: string; action?: AuditAction },
): Promise<boolean> {
  const tokens: [string, string][] = [[victim.csrf, "the victim's start token"]];
  if (browser.token !== undefined) tokens.push([browser.token, 'its own start token']);
  const shown = await world.startTokenShownTo(browser.agent, victimAttempt.action);
  if (shown !== undefined && tokens.every(([token]) => token !== shown)) {
    tokens.push([shown, 'the start token its page shows now']);
  }
  const attacker: AuditUser = { name: 'attacker', agent: browser.agent, csrf: victim.csrf };
  for (const [token, whose] of tokens) {
    const answer = await world.postStart(attacker, victimAttempt.action, { token, phone: victimAttempt.phone });
    verdict.note(`${browser.label}, with ${whose}: ${describeAnswer(answer)}`);
    if (parseHandoffPage(answer.body) === undefined) continue;
    const attempt = await world.attemptOf(answer);
    if (attempt.userRef === victimAttempt.userRef) return true;
    verdict.note('that start was for the attacker, not the victim');
  }
  return false;
}

/** The victim signs in on a browser holding `planted`; fails the check when that cookie then starts as her. */
async function plantAndSignIn(world: AuditWorld, verdict: Verdict, planted: Planted): Promise<void> {
  const victimAgent = world.agent();
  victimAgent.jar.plant(planted.cookies);
  let victim: AuditUser;
  try {
    victim = await world.signIn(undefined, victimAgent);
  } catch (error) {
    // Only the attacker's signed-in cookie was there to plant: an app may refuse to sign in a
    // browser already signed in, and then nobody's session is shared.
    if (planted.token === undefined) throw error;
    verdict.note(`your sign-in refused the browser already signed in as the attacker: ${describeThrown(error)}`);
    return;
  }
  const after = cookiesOf(world, victimAgent);
  const kept = namesOf(planted.cookies.filter((cookie) => after.some((held) => sameCookieAndValue(held, cookie))));
  verdict.note(`${planted.what}: kept as planted by the victim's sign-in: ${kept || 'none'}`);
  // The same number typed (an action that texts a typed number): the service's userRef may be
  // bound to the number as well as the user.
  const phone = world.newNumber();
  const { userRef } = await world.attemptOf(await world.postStart(victim, undefined, { phone }));
  const browser = { ...planted, label: "the planted cookie's browser" };
  const shared = await startsAsVictim(world, verdict, browser, victim, { userRef, phone });
  verdict.expect(
    !shared,
    `a browser holding only ${planted.what} started a verification as the user who signed in (the sign-in kept ${kept || 'the planted session'})`,
  );
}

export const fixationChecks: AuditCheck[] = [
  {
    id: 'session.fixation',
    title: "Signing in starts a new session: a cookie planted before the sign-in is not the victim's session after it",
    fix: 'In your sign-in, call req.session.regenerate() before setting the user, then req.session.save() before redirecting (express-session), so the session id the browser came with is never signed in.',
    phase: 'concurrent',
    async run(world, verdict) {
      const plants = await attackersCookies(world, verdict);
      if (plants.length === 0) {
        verdict.note('the app set no cookie, before or at sign-in: there is no session cookie to plant');
        return;
      }
      for (const planted of plants) await plantAndSignIn(world, verdict, planted);
    },
  },
];
