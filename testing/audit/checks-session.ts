/**
 * The app around the kit: its session cookie's flags (behind the configured proxy, from the sign-in
 * through a verification of each action and the page it lands on), and a sweep
 * that fulfils the user who verified but never came back, on the clock the kit was given.
 */
import type { AuditCheck, Verdict } from './check.ts';
import { pagesAfter } from './checks-pages.ts';
import { attributeNames, cookieLineDeletes, lastAttribute } from './cookie-lifetime.ts';
import { callHook } from './hooks.ts';
import type { AuditUser, AuditWorld } from './world.ts';

interface CookieFlags {
  name: string;
  httpOnly: boolean;
  secure: boolean;
  sameSite: string | undefined;
  /** The line deletes the cookie (Max-Age 0 or less, or else an Expires past): the browser keeps nothing. */
  deletes: boolean;
}

/**
 * A Set-Cookie line's flags as a browser reads them (RFC 6265bis §5.6): the cookie's name trimmed
 * (a line without `=` sets a nameless cookie), each attribute's name trimmed and matched whole, and
 * of several SameSite attributes the last one (a middleware that appends `; SameSite=None` to
 * every cookie overrides what the session library wrote).
 */
function parseCookie(line: string): CookieFlags {
  const pair = line.split(';')[0] ?? '';
  const names = attributeNames(line);
  return {
    name: pair.includes('=') ? pair.slice(0, pair.indexOf('=')).trim() : '',
    httpOnly: names.includes('httponly'),
    secure: names.includes('secure'),
    sameSite: lastAttribute(line.split(';').slice(1), 'samesite')?.toLowerCase(),
    deletes: cookieLineDeletes(line),
  };
}

/**
 * Starts, verifies and lands one attempt of each action as `user`, following the pages after each
 * landing. A cookie set again later (SameSite=None "for the way back from the service", by one
 * action's start only) is the one the browser keeps.
 */
async function verifyEveryAction(world: AuditWorld, verdict: Verdict, user: AuditUser): Promise<void> {
  for (const action of world.options.actions) {
    const started = await world.postStart(user, action);
    const attempt = await world.attemptOf(started).catch(() => undefined);
    if (attempt === undefined) {
      verdict.note(`${action.name}: the start answered ${started.status}: cookies after it not seen`);
      continue;
    }
    await world.control.completeSession(attempt.sessionId, 'verified');
    await pagesAfter(world, user, await world.landOn(user, attempt));
  }
}

export const sessionChecks: AuditCheck[] = [
  {
    id: 'cookie.flags',
    title:
      'The session cookie is HttpOnly, SameSite Lax or Strict, and Secure behind an https proxy: as the sign-in sets it, and as the start, the landing and the page after it set it again in every action',
    fix: "Set the session cookie's httpOnly: true, sameSite: 'lax', secure: 'auto', and Express's 'trust proxy' to your proxy so req.secure follows X-Forwarded-Proto.",
    phase: 'concurrent',
    async run(world, verdict) {
      const proxyHeaders = world.options.proxy?.headers ?? {};
      const agent = world.agent(proxyHeaders);
      const user = await world.signIn(undefined, agent);
      const bySignIn = agent.exchanges.length;
      await verifyEveryAction(world, verdict, user);
      const wanted = world.options.sessionCookie;
      const named = agent.exchanges
        .flatMap((x, i) => {
          const later = i >= bySignIn;
          // After the sign-in, the service's own pages (a step-up walks them) set cookies of their origin.
          if (later && new URL(x.url).origin !== world.options.appOrigin) return [];
          return x.setCookies.map((line) => ({ ...parseCookie(line), later }));
        })
        .filter((c) => wanted === undefined || c.name === wanted);
      // A line deleting a cookie (res.clearCookie) leaves the browser no cookie whose flags matter.
      const cleared = named.filter((c) => c.deletes).map((c) => c.name);
      if (cleared.length > 0)
        verdict.note(`the sign-in or the verification deleted ${[...new Set(cleared)].join(', ')} (not checked)`);
      // One line per cookie and flags (a rolling session sets it on every answer).
      const kept = new Map(named.filter((c) => !c.deletes).map((c) => [JSON.stringify(c), c]));
      const cookies = [...kept.values()];
      const https =
        new URL(world.options.appUrl).protocol === 'https:' ||
        Object.entries(proxyHeaders).some(([k, v]) => k.toLowerCase() === 'x-forwarded-proto' && v.startsWith('https'));
      verdict.expect(
        cookies.length > 0,
        `signing in and verifying set no cookie${wanted === undefined ? '' : ` named ${wanted}`}`,
      );
      // Which cookie is the session cannot be guessed safely (a script-readable "remember me"
      // credential would pass): the app names it, or every cookie is held to the session's flags.
      if (wanted === undefined && cookies.length > 1) {
        verdict.note(
          `checked every cookie the sign-in and the verification set (${[...new Set(cookies.map((c) => c.name))].join(', ')}); give \`sessionCookie\` to check only your session's`,
        );
      }
      for (const cookie of cookies) {
        const name = cookie.later ? `${cookie.name} as set again after the sign-in` : cookie.name;
        verdict.note(
          `${name}: HttpOnly ${cookie.httpOnly}, Secure ${cookie.secure}, SameSite ${cookie.sameSite ?? '(none)'}`,
        );
        verdict.expect(cookie.httpOnly, `${name} is not HttpOnly`);
        verdict.expect(
          cookie.sameSite === 'lax' || cookie.sameSite === 'strict',
          `${name} has SameSite ${cookie.sameSite ?? '(none)'}`,
        );
        if (https) verdict.expect(cookie.secure, `${name} is not Secure behind a proxy that says https`);
      }
    },
  },
  {
    id: 'sweep.never-returns',
    title: 'The sweep fulfils a user who verified (in any action) and never came back, once',
    fix: "Run kit.runSweep() on a schedule (kit.startSweepWorker, or the runSweepJob cron job) with the kit's clock, and keep the effect inside fulfil().",
    phase: 'alone',
    async run(world, verdict) {
      const sweep = world.options.sweep;
      if (sweep === undefined) {
        verdict.notRun =
          'give `sweep` ({ run: () => kit.runSweep(), clock }, on the clock your kit was given) to run this check';
        return;
      }
      // A verified attempt of every action, nobody landing: an action's effect may be outside fulfil().
      const attempts = [];
      for (const action of world.options.actions) {
        const user = await world.signIn();
        const attempt = await world.verified(user, action);
        verdict.expect(
          (await world.effects(attempt.sessionId)) === 0,
          `${action.name}: the action ran before anyone landed or swept`,
        );
        attempts.push({ action, attempt });
      }
      const limit = world.options.timeoutMs * 3;
      await callHook('your sweep clock', limit, () => sweep.clock.advance({ seconds: sweep.advanceSeconds ?? 1800 }));
      await callHook('your sweep.run()', limit, () => sweep.run());
      const once = await Promise.all(attempts.map(({ attempt }) => world.effects(attempt.sessionId)));
      await callHook('your sweep.run()', limit, () => sweep.run());
      for (const [i, { action, attempt }] of attempts.entries()) {
        const twice = await world.effects(attempt.sessionId);
        verdict.note(`${action.name}: effects after one sweep: ${once[i]}; after a second: ${twice}`);
        verdict.expect(
          once[i] === 1,
          `${action.name}: the sweep ran the action ${once[i]} times for a verified attempt nobody landed (expected 1)`,
        );
        verdict.expect(twice === 1, `${action.name}: a second sweep left ${twice} effects (expected 1)`);
        // Swept, then nothing legitimate runs again: a job or a hook the sweep set off counts too.
        verdict.countAgainLater(attempt.sessionId, 1, `${action.name}: the attempt swept twice`);
      }
    },
  },
];
