/**
 * A start asked to confirm gets the user a grant of that action's scope: two starts of one browser
 * asked at once for the same scope share one grant, but a start of another scope at the same time
 * gets its own (a grant of one scope opens nothing of another).
 */
import { describe, expect, it } from 'vitest';
import type { AuditAgent, Answer } from '../../testing/audit/agent.ts';
import type { AuditAction } from '../../testing/audit/options.ts';
import { grantWhenAsked, type GrantingWorld } from '../../testing/audit/start-grant.ts';

const APP = 'http://app.test';
const ACTIONS: AuditAction[] = [
  { name: 'change_phone', requireRecentVerification: { scope: 'account', maxAge: 600 } },
  { name: 'add_payee', requireRecentVerification: { scope: 'payments', maxAge: 600 } },
  { name: 'change_email', requireRecentVerification: { scope: 'account', maxAge: 600 } },
];

/** The guard's "Confirm it's you" page for `action`: a form to the start carrying a kept request. */
function confirmPage(action: AuditAction): Answer {
  const intent = action.name.padEnd(43, 'x');
  const body = `<form method="post" action="/verify/start"><input type="hidden" name="_csrf" value="t"><input type="hidden" name="action" value="${action.name}"><button name="intent" value="${intent}">Confirm it's you</button></form>`;
  return { status: 200, headers: {}, setCookies: [], body, location: null, url: `${APP}/verify/start` };
}

/** One browser whose presses of "Confirm it's you" are recorded (the action each confirmed), answered a moment later. */
function browser(pressed: string[]): AuditAgent {
  const agent = {
    postForm: async (_target: string, fields: Record<string, string>) => {
      pressed.push(fields.action ?? '');
      await new Promise((resolve) => setTimeout(resolve, 20));
      return confirmPage(ACTIONS[0]!);
    },
    request: () => Promise.resolve({ location: '/home' }),
  };
  return agent as unknown as AuditAgent;
}

const world: GrantingWorld<null> = {
  options: { actions: ACTIONS },
  resolve: (location, base = APP) => new URL(location, base),
  startPath: () => '/verify/start',
  sameOrigin: () => ({}),
  attemptOf: () => Promise.resolve(null),
  walkHostedPage: () => Promise.resolve('/verify/land'),
};

describe('grants got for starts asked to confirm', () => {
  it('gets each scope its own grant when one browser starts two scopes at once, one grant for one scope', async () => {
    const pressed: string[] = [];
    const user = { agent: browser(pressed) };
    const [account, payments, accountAgain] = ACTIONS as [AuditAction, AuditAction, AuditAction];
    const granted = await Promise.all(
      [account, payments, accountAgain].map((action) => grantWhenAsked(world, user, action, confirmPage(action))),
    );
    expect(granted).toEqual([true, true, true]);
    // change_email shares the grant of change_phone's scope; add_payee's scope gets its own.
    expect(pressed.sort()).toEqual(['add_payee', 'change_phone']);
  });
});
