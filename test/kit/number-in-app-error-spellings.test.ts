/**
 * A full phone number appears only where the user typed it: an error the app's fulfil throws
 * naming the user's number is logged by the kit with the number masked, wherever the message
 * puts it: a URL's path or query (a plus percent-encoded, a value followed by `&`), glued to a
 * word of a script written without spaces, or after `#`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionDefinition } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';
import { USERS } from '../support/users.ts';

const alice = USERS.alice!;
const digits = alice.destination.slice(1); // 15550001111

const MESSAGES: Record<string, string> = {
  'in a URL path': `GET https://crm.example.com/users/${alice.destination} answered 404`,
  'url-encoded plus in a query': `GET https://crm.example.com/users?phone=${encodeURIComponent(alice.destination)} answered 404`,
  'query value followed by &': `GET https://crm.example.com/users?phone=${digits}&region=us answered 404`,
  'glued to CJK text': `手机号${digits}未注册`,
  'after a # sign': `no payout account for customer #${digits}`,
};

const actions: ActionDefinition<unknown>[] = Object.values(MESSAGES).map((message, i) => ({
  name: `a${i}`,
  operationSensitivity: 'normal' as const,
  successPath: '/done',
  fulfil: () => {
    throw new Error(message);
  },
}));

let app: TestApp;
const seen = newSeen();
beforeAll(async () => {
  app = await startTestApp({ kit: { actions } });
});
afterAll(async () => {
  await app?.close();
});

describe("the integrator's fulfil error naming the user's number, logged by the kit", () => {
  Object.keys(MESSAGES).forEach((label, i) => {
    it(label, async () => {
      const user = await app.agent(seen).signIn('alice');
      await user.start(`a${i}`);
      const row = await app.latestAttempt();
      await app.emulator.control.complete(row.sessionId, { outcome: 'verified' });
      expect((await user.landFor(row.sessionId, row.state)).status).toBe(500);
      const lines = app.logs.filter((line) => line.includes(row.sessionId));
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line, line).not.toContain(digits);
    });
  });
});
