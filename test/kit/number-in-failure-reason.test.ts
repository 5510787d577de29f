/**
 * A failure reason the service (or a proxy in front of it) answers is its own text: shaped like a
 * code, it may still quote the user's number ("blocked_15550001111"). It reaches the completion's
 * log line, the outcome event, the user's page, the mobile answer and the stored attempt, where a
 * full number never appears: such a reason is kept as `unknown`, as one that is no code is.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OutcomeEvent } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { waitFor } from '../support/wait-for.ts';

const DIGITS = '5550001111';
const REASON = `blocked_1${DIGITS}`;

let app: TestApp;
const events: OutcomeEvent[] = [];
beforeAll(async () => {
  app = await startTestApp({ kit: { onOutcome: (event) => void events.push(event) } });
});
afterAll(async () => {
  await app?.close();
});

it('a reason quoting a number: the generic failure everywhere, the number nowhere', async () => {
  const alice = await app.agent().signIn('alice');
  await alice.start('grant_badge');
  const attempt = await app.latestAttempt();
  expect((await app.emulator.control.complete(attempt.sessionId, { outcome: 'failed', reason: REASON })).status).toBe(
    200,
  );
  const landing = await alice.landFor(attempt.sessionId, attempt.state);
  expect(landing.status).toBe(200);
  expect(await landing.text()).not.toContain(DIGITS);
  expect(await app.attempt(attempt.sessionId)).toMatchObject({ outcome: 'failed', failureReason: 'unknown' });
  await waitFor(() => events.some((e) => e.sessionId === attempt.sessionId), 3000, 'the outcome event');
  expect(JSON.stringify(events)).not.toContain(DIGITS);
  expect(app.logs.filter((line) => line.includes(DIGITS))).toEqual([]);
});

it('control: a reason that is a code without a number is kept as given', async () => {
  const bob = await app.agent().signIn('bob');
  await bob.start('grant_badge');
  const attempt = await app.latestAttempt();
  await app.emulator.control.complete(attempt.sessionId, { outcome: 'failed', reason: 'blocked_2024' });
  expect((await bob.landFor(attempt.sessionId, attempt.state)).status).toBe(200);
  expect(await app.attempt(attempt.sessionId)).toMatchObject({ outcome: 'failed', failureReason: 'blocked_2024' });
});
