/**
 * The emulator keeps about a day of state, not everything it ever created: sessions, idempotency
 * keys and SMS older than 24 h on the virtual clock are dropped as new sessions come, so an
 * emulator left running (the demo's) does not grow without end.
 */
import { describe, expect, it } from 'vitest';
import { IdempotencyStore } from '../../emulator/api/idempotency.ts';
import { RETENTION_MS, SessionStore, type SessionInput } from '../../emulator/api/sessions.ts';
import { VirtualClock } from '../../emulator/clock.ts';
import { Outbox } from '../../emulator/sms/outbox.ts';
import { WEB_CLIENT, createSession, sessionBody, useTestEmulator } from '../support/emulator.ts';

const DAY_SECONDS = RETENTION_MS / 1000;

const input = (n: number): SessionInput => ({
  clientId: 'web-client',
  returnUrl: 'https://app.example/verify/return',
  platform: 'web',
  destination: '+15551234567',
  operationSensitivity: 'normal',
  userRef: `user-${n}`,
  state: `state-${n}`,
});

describe('the emulator forgets what is past 24 h as new sessions come', () => {
  it('sessions: creating one drops every session older than 24 h, and keeps the younger ones', () => {
    const clock = new VirtualClock();
    const sessions = new SessionStore(clock);
    const old = [sessions.create(input(1)), sessions.create(input(2))];
    clock.advance({ seconds: 3600 });
    const young = sessions.create(input(3));
    clock.advance({ seconds: DAY_SECONDS - 3600 + 1 });
    expect(sessions.size).toBe(3);

    const fresh = sessions.create(input(4));

    expect(sessions.size).toBe(2);
    expect(sessions.get(young.id)).toBe(young);
    expect(sessions.get(fresh.id)).toBe(fresh);
    for (const session of old) expect(sessions.byHandoff(session.handoff)).toBeUndefined();
  });

  it('idempotency keys: a claim drops stored keys older than 24 h, never one still in flight', () => {
    const clock = new VirtualClock();
    const keys = new IdempotencyStore(clock);
    const running = keys.claim('web-client', 'running-key', { n: 2 });
    const stored = keys.claim('web-client', 'old-key', { n: 1 });
    if (stored.kind === 'new') stored.store({ sessionId: 'ses_1' });
    clock.advance({ seconds: DAY_SECONDS + 1 });
    expect(keys.size).toBe(2);

    keys.claim('web-client', 'new-key', { n: 3 });

    expect(keys.size).toBe(2);
    expect(keys.claim('web-client', 'running-key', { n: 2 }).kind).toBe('in_flight');
    expect(running.kind).toBe('new');
    expect(keys.claim('web-client', 'old-key', { n: 9 }).kind).toBe('new');
  });

  it('SMS: sending one drops the messages older than 24 h', () => {
    const clock = new VirtualClock();
    const outbox = new Outbox(clock, () => undefined);
    outbox.send('+15551234567', '111111', 'ses_old');
    clock.advance({ seconds: 3600 });
    outbox.send('+15551234567', '222222', 'ses_young');
    clock.advance({ seconds: DAY_SECONDS - 3600 + 1 });

    outbox.send('+15551234567', '333333', 'ses_fresh');

    expect(outbox.list().map((m) => m.sessionId)).toEqual(['ses_young', 'ses_fresh']);
  });
});

describe('a running emulator after a day', () => {
  const emulator = useTestEmulator({}, { resetEach: true });

  it("shows only the last day's SMS in its outbox, and the old session reads as unknown", async () => {
    const old = await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT));
    await emulator.control.advanceClock(DAY_SECONDS + 1);
    const fresh = await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT));

    const messages = await emulator.control.sentMessages();
    expect(messages.map((m) => m.sessionId)).toEqual([fresh.body.sessionId]);
    await expect(emulator.control.latestCode({ sessionId: String(old.body.sessionId) })).rejects.toThrow();
  });
});
