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

beforeAll(async () => {
  app = await startTestApp({ kit: { actions } });
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
