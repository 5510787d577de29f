/**
 * The client secret never appears in a log line, at any length: an error the app's code throws
 * quoting a part of the secret (a key cut short) has that part redacted, a KitError as a plain
 * Error, in its description and in the kit's log line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KitError, KitErrorCode, type ActionDefinition } from '../../middleware/index.ts';
import { describeError } from '../../middleware/logger.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';

let app: TestApp;
const seen = newSeen();
let part = '';

const actions: ActionDefinition<unknown>[] = [
  {
    name: 'grant',
    operationSensitivity: 'normal',
    successPath: '/done',
    fulfil: () => {
      // e.g. an integrator's error naming which key it used, cut short "for safety"
      throw new KitError(KitErrorCode.FulfilFailed, `payout API refused key ${part}…`);
    },
  },
];

actions.push({ name: 'refused', operationSensitivity: 'normal', successPath: '/done', fulfil: () => undefined });

beforeAll(async () => {
  app = await startTestApp({
    kit: {
      actions,
      // A refusal in the app's words, shown to the user as written: completed after it was made.
      beforeCreate: (_req, who) => {
        if (who.action !== 'refused') return;
        const refusal = new KitError(KitErrorCode.InvalidActionParams, 'We cannot start this now');
        refusal.message += ` (key ${part}…)`;
        throw refusal;
      },
    },
  });
  part = app.secret.slice(0, 30);
});
afterAll(async () => {
  await app?.close();
});

describe('a KitError thrown by the integrator quoting the start of the client secret', () => {
  it('describeError redacts the part from an Error (control) ...', () => {
    expect(String(describeError(new Error(`key ${part}…`)).message)).not.toContain(part);
  });
  it('... and from a KitError', () => {
    const message = String(describeError(new KitError(KitErrorCode.FulfilFailed, `key ${part}…`)).message);
    expect(message).not.toContain(part);
  });
  it('... and from a KitError whose message was completed after it was made (the constructor redacted only its own)', () => {
    const error = new KitError(KitErrorCode.FulfilFailed, 'payout API refused');
    error.message += `: key ${part}…`;
    class PayoutError extends KitError {
      constructor(key: string) {
        super(KitErrorCode.FulfilFailed, 'payout API refused');
        this.message = `payout API refused key ${key}`;
      }
    }
    for (const made of [error, new PayoutError(part)]) {
      const message = String(describeError(made).message);
      expect(message, message).not.toContain(part.slice(8, 16));
    }
  });
  it("the page showing the app's refusal as written, completed after it was made, without the part", async () => {
    const user = await app.agent(seen).signIn('alice');
    const answer = await user.tryStart('refused');
    expect(answer.status).toBe(400);
    const page = await answer.text();
    expect(page).toContain('We cannot start this now');
    expect(page, page).not.toContain(part.slice(8, 16));
  });
  it('the kit logs the fulfil KitError without the part', async () => {
    const user = await app.agent(seen).signIn('alice');
    await user.start('grant');
    const row = await app.latestAttempt();
    await app.emulator.control.complete(row.sessionId, { outcome: 'verified' });
    await user.landFor(row.sessionId, row.state);
    const lines = app.logs.filter((line) => line.includes('payout API refused'));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line, line).not.toContain(part);
  });
});
