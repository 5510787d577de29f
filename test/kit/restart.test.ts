/**
 * "Verify what you apply": the attempt records the destination the code was sent to and fulfil
 * receives exactly that; a restart runs the action's `prepare` again for the user as they are now,
 * with the earlier attempt's stored parameters, and a refusal is a clear 4xx page with no SMS sent
 * and nothing stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KitError,
  KitErrorCode,
  type ActionDefinition,
  type PrepareContext,
  type VerifiedAttempt,
} from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { USERS } from '../support/users.ts';
import type { Agent } from '../support/agent.ts';
import { newSeen } from '../support/seen.ts';

let app: TestApp;
const seen = newSeen();
const blocked = new Set<string>();
const prepared: PrepareContext[] = [];
const fulfilled: VerifiedAttempt[] = [];

const transfer: ActionDefinition<unknown> = {
  name: 'transfer',
  operationSensitivity: 'sensitive',
  successPath: '/done/transfer',
  prepare(req, context) {
    prepared.push(context);
    // What prepare enforces must hold on a restart too: here, a blocklist checked at every start.
    if (blocked.has(context.user.userRef)) {
      throw new KitError(KitErrorCode.InvalidActionParams, 'Transfers are blocked for this account.');
    }
    const given = context.restartParams ?? (req.body as Record<string, unknown>);
    const amount = (given as Record<string, unknown>).amount;
    if (typeof amount !== 'string' || !/^\d{1,6}$/.test(amount)) {
      throw new KitError(KitErrorCode.InvalidActionParams, 'Enter an amount.');
    }
    return { amount };
  },
  fulfil(_tx, attempt) {
    fulfilled.push(attempt);
  },
};

beforeAll(async () => {
  app = await startTestApp({ kit: { actions: [transfer] } });
});
afterAll(async () => {
  await app?.close();
});

async function failedTransfer(user: Agent, amount: string) {
  await user.start('transfer', { amount });
  const row = await app.latestAttempt();
  await app.emulator.control.complete(row.sessionId, { outcome: 'failed', reason: 'otp_locked' });
  await user.landFor(row.sessionId, row.state);
  return row;
}

describe('restart', () => {
  it(
    'runs prepare again with the stored params, texts the current destination, and fulfil ' +
      'receives that destination',
    async () => {
      const alice = await app.agent(seen).signIn('alice');
      const failed = await failedTransfer(alice, '250');
      const original = USERS.alice!.destination;
      USERS.alice!.destination = '+15550007777'; // the user's number changed after the failure
      try {
        prepared.length = 0;
        // A form field is not what a restart uses: the stored params are.
        await alice.start('transfer', { restart: failed.state, amount: '999999' });
        const now = { userRef: 'user-alice', destination: '+15550007777' };
        expect(prepared).toEqual([{ user: now, restartParams: { amount: '250' } }]);
        const restarted = await app.latestAttempt();
        expect(restarted.params).toEqual({ amount: '250' });
        const sms = await app.emulator.control.outbox();
        const texted = sms.filter((m) => m.sessionId === restarted.sessionId).map((m) => m.to);
        expect(texted).toEqual(['+15550007777']);
        await app.emulator.control.complete(restarted.sessionId, { outcome: 'verified' });
        expect((await alice.landFor(restarted.sessionId, restarted.state)).status).toBe(303);
        const applied = { sessionId: restarted.sessionId, destination: '+15550007777', params: { amount: '250' } };
        expect(fulfilled.at(-1)).toMatchObject(applied);
      } finally {
        USERS.alice!.destination = original;
      }
    },
  );

  it('refused by prepare now: a clear 400 page, no SMS, no attempt stored', async () => {
    const bob = await app.agent(seen).signIn('bob');
    const failed = await failedTransfer(bob, '40');
    blocked.add('user-bob');
    try {
      const sent = (await app.emulator.control.stats()).smsSent;
      const attempts = await app.attemptCount();
      const refused = await bob.postStart({ _csrf: bob.csrf, action: 'transfer', restart: failed.state });
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain('Transfers are blocked for this account.');
      expect((await app.emulator.control.stats()).smsSent).toBe(sent);
      expect(await app.attemptCount()).toBe(attempts);
    } finally {
      blocked.delete('user-bob');
    }
  });

  it('a fresh start records the destination it texted', async () => {
    const bob = await app.agent(seen).signIn('bob');
    await bob.start('transfer', { amount: '5' });
    expect((await app.latestAttempt()).destination).toBe(USERS.bob!.destination);
  });
});
