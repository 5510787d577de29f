/**
 * The two defects a hostile review reproduced against the running demo, as tests over real HTTP
 * (the demo app and the emulator, no browser):
 *
 * 1. An older verified intent must never overwrite a newer one: Alice verifies "change payout to
 *    ••••1111" but never lands, then changes it to ••••2222 and lands. Neither the sweep finding the
 *    first attempt nor its return URL opened from the history may put ••••1111 back.
 * 2. A restart verifies what it applies: "Start a new verification" after a failure texts the
 *    user's current number, so that number (not the old attempt's) is the one confirmed; and it runs
 *    the action's `prepare` again, so a start that `prepare` refuses now is refused with nothing sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The demo's kit comes from the built package: its internals from the same build.
import { contextOf } from '../../dist/middleware/create-kit.js';
import { runSweep } from '../../dist/middleware/sweep/sweep.js';
import { Agent, formToken, type Answer } from '../support/agent.ts';
import { startStack, type Stack } from '../support/demo-stack.ts';
import { demoSite, latestAttempt } from '../support/security-stack.ts';
import { DEMO_USERS, type DemoUserKey } from '../support/users.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

const signIn = (user: DemoUserKey): Promise<Agent> => new Agent(demoSite(stack)).signIn(user);

/** The kit's CSRF token from the home page's start forms, read again before each start. */
async function kitToken(agent: Agent): Promise<string> {
  const home = await agent.request('/');
  return formToken(home.body, /<form method="post" action="\/verify\/start">\s*/)!;
}

interface Started {
  sessionId: string;
  state: string;
}

async function outcomeOf(sessionId: string): Promise<string> {
  return (await stack.demo.store.findAttemptBySessionId(sessionId))?.outcome ?? 'missing';
}

async function start(agent: Agent, fields: Record<string, string>): Promise<Answer> {
  return agent.postStart({ _csrf: await kitToken(agent), ...fields });
}

async function startOk(agent: Agent, fields: Record<string, string>): Promise<Started> {
  const answer = await start(agent, fields);
  expect(answer.status, answer.body.slice(0, 300)).toBe(200);
  expect(answer.body).toContain('id="verify-kit-handoff"');
  const { sessionId, state } = await latestAttempt(stack);
  return { sessionId, state };
}

const land = (agent: Agent, a: Started) => agent.landFor(a.sessionId, a.state);

async function payoutMasked(agent: Agent): Promise<string | undefined> {
  const me = await (await agent.request('/api/me')).json<{ user: { payoutAccount: { masked: string } | null } }>();
  return me.user.payoutAccount?.masked;
}

describe('the newest verified intent wins', () => {
  async function twoVerifiedChanges(user: DemoUserKey) {
    const agent = await signIn(user);
    const older = await startOk(agent, { action: 'change_payout', accountNumber: '1000 0000 1111' });
    expect((await stack.control.complete(older.sessionId, { outcome: 'verified' })).status).toBe(200);
    // Alice never lands (tab closed); she starts again with another account, verifies and lands.
    const newer = await startOk(agent, { action: 'change_payout', accountNumber: '2000 0000 2222' });
    expect((await stack.control.complete(newer.sessionId, { outcome: 'verified' })).status).toBe(200);
    const landed = await land(agent, newer);
    expect(landed.status).toBe(303);
    expect(await payoutMasked(agent)).toBe('••••2222');
    return { agent, older, newer };
  }

  it('the older attempt’s return URL opened from the history afterwards does not put the replaced account back', async () => {
    const { agent, older } = await twoVerifiedChanges('alice');
    await land(agent, older);
    expect(await payoutMasked(agent)).toBe('••••2222');
    expect(await outcomeOf(older.sessionId)).not.toBe('fulfilled');
  });

  it('the sweep finding the older verified attempt afterwards does not put the replaced account back', async () => {
    const { agent, older } = await twoVerifiedChanges('bob');
    const deps = contextOf(stack.demo.kit);
    await runSweep({ ...deps, now: () => Date.now() + 10 * 60_000 }, { owner: 'defect-1-sweep' });
    expect(await payoutMasked(agent)).toBe('••••2222');
    expect(await outcomeOf(older.sessionId)).not.toBe('fulfilled');
  });
});

describe('a restart verifies what it applies', () => {
  const setPhone = (userId: string, phone: string) =>
    stack.demo.db.prepare('UPDATE demo_users SET phone = ? WHERE id = ?').run(phone, userId);

  it('confirm_phone restarted after the number changed confirms the number the new code was sent to', async () => {
    const userId = DEMO_USERS.chen.id;
    const agent = await signIn('chen');
    const failed = await startOk(agent, { action: 'confirm_phone' });
    await stack.control.complete(failed.sessionId, { outcome: 'failed', reason: 'otp_locked' });
    const page = await land(agent, failed);
    expect(page.body).toContain(`name="restart" value="${failed.state}"`);

    // The profile's number changes between the failure and the restart.
    const newNumber = '+15550109999';
    setPhone(userId, newNumber);
    const restarted = await startOk(agent, { action: 'confirm_phone', restart: failed.state });
    const texted = (await stack.control.outbox()).filter((m) => m.sessionId === restarted.sessionId).map((m) => m.to);
    expect(texted).toEqual([newNumber]);
    await stack.control.complete(restarted.sessionId, { outcome: 'verified' });
    expect((await land(agent, restarted)).status).toBe(303);

    const user = stack.demo.db
      .prepare('SELECT verified_phone AS verifiedPhone FROM demo_users WHERE id = ?')
      .get(userId) as {
      verifiedPhone: string | null;
    };
    // Only a number a code of this session was read from may be marked verified.
    expect(user.verifiedPhone).toBe(newNumber);
  });

  it('a restart runs prepare again: refused now (already the payout account) is a clear 4xx page and sends nothing', async () => {
    const agent = await signIn('alice');
    const failed = await startOk(agent, { action: 'change_payout', accountNumber: '3000 0000 3333' });
    await stack.control.complete(failed.sessionId, { outcome: 'failed', reason: 'otp_locked' });
    await land(agent, failed);
    // Meanwhile the same account became the payout account through another verification.
    const other = await startOk(agent, { action: 'change_payout', accountNumber: '3000 0000 3333' });
    await stack.control.complete(other.sessionId, { outcome: 'verified' });
    expect((await land(agent, other)).status).toBe(303);

    const sentBefore = (await stack.control.stats()).smsSent;
    const attemptCount = async () => (await stack.demo.store.listAttempts({ limit: Number.MAX_SAFE_INTEGER })).length;
    const attemptsBefore = await attemptCount();
    const refused = await start(agent, { action: 'change_payout', restart: failed.state });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('That is already your payout account.');
    expect((await stack.control.stats()).smsSent).toBe(sentBefore);
    expect(await attemptCount()).toBe(attemptsBefore);
  });
});

describe("the demo's onOutcome outbox", () => {
  async function activityWithEmail(agent: Agent, sessionId: string, outcome: string): Promise<string> {
    for (let i = 0; i < 200; i++) {
      const page = await agent.request('/activity');
      if (page.body.includes(`data-session-id="${sessionId}" data-outcome="${outcome}"`)) return page.body;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no ${outcome} email for ${sessionId} on the Activity page`);
  }

  it('the Activity page shows one email per outcome: the applied change and the older request that was superseded', async () => {
    const agent = await signIn('chen');
    const older = await startOk(agent, { action: 'change_payout', accountNumber: '4000 0000 4444' });
    const newer = await startOk(agent, { action: 'change_payout', accountNumber: '5000 0000 5555' });
    await stack.control.complete(older.sessionId, { outcome: 'verified' });
    await stack.control.complete(newer.sessionId, { outcome: 'verified' });
    expect((await land(agent, newer)).status).toBe(303);
    const page = await activityWithEmail(agent, newer.sessionId, 'fulfilled');
    expect(page).toContain('Payouts now go to the account ending 5555.');
    await activityWithEmail(agent, older.sessionId, 'superseded');
    // A reload and a sweep deliver nothing twice.
    await land(agent, newer);
    await runSweep({ ...contextOf(stack.demo.kit), now: () => Date.now() + 10 * 60_000 }, { owner: 'outbox-sweep' });
    const emails = stack.demo.db
      .prepare('SELECT outcome FROM demo_outbox WHERE session_id IN (?, ?) ORDER BY outcome')
      .all(older.sessionId, newer.sessionId);
    expect(emails).toEqual([{ outcome: 'fulfilled' }, { outcome: 'superseded' }]);
    expect(page).not.toContain(stack.clientSecret);
  });
});

describe('the Verifications page (the kit’s read API)', () => {
  it('lists only the signed-in user’s attempts with outcome, age, who settled them and the number masked', async () => {
    const agent = await signIn('chen');
    const failed = await startOk(agent, { action: 'confirm_phone' });
    expect((await stack.control.complete(failed.sessionId, { outcome: 'failed', reason: 'otp_locked' })).status).toBe(
      200,
    );
    await land(agent, failed);
    const verified = await startOk(agent, { action: 'confirm_phone' });
    expect((await stack.control.complete(verified.sessionId, { outcome: 'verified' })).status).toBe(200);
    await land(agent, verified);

    const page = await agent.request('/verifications');
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const rows = [...page.body.matchAll(/<tr data-session-id="([^"]+)" data-outcome="([^"]+)">([\s\S]*?)<\/tr>/g)];
    const chens = (
      await stack.demo.store.listAttempts({ userRef: DEMO_USERS.chen.id, limit: Number.MAX_SAFE_INTEGER })
    ).map((a) => a.sessionId);
    expect(new Set(rows.map((row) => row[1]))).toEqual(new Set(chens));
    expect(rows.slice(0, 2).map((row) => [row[1], row[2]])).toEqual([
      [verified.sessionId, 'fulfilled'],
      [failed.sessionId, 'failed'],
    ]);
    expect(rows[1]![3]).toContain('(otp_locked)');
    expect(rows[0]![3]).toContain('you came back to the site');
    expect(rows[0]![3]).toMatch(/just now|\d+ min ago/);
    expect(rows[0]![3]).toMatch(/••\u00a0\d\d</);
    expect(page.body).not.toContain(DEMO_USERS.chen.phone);

    const other = await signIn('bob');
    expect((await other.request('/verifications')).body).not.toContain(verified.sessionId);
  });
});
