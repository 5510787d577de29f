/**
 * A successPath that returns something refused (not a same-origin path) is logged with no piece
 * of the client secret: the refused value (`returned`) holding eight characters of it (a URL built
 * from a secret cut short) reached the app's logger whole, as only whole spellings were removed.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ActionDefinition } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';

let app: TestApp;
const seen = newSeen();
/** The secret's random part (after "kit-secret-"), known once the app is up. */
let piece = '';

const action: ActionDefinition<unknown> = {
  name: 'to_debug_url',
  operationSensitivity: 'normal',
  // A slip: an absolute URL (refused) whose path carries a cut of the key, as a debug link did.
  successPath: () => `https://app.example/debug/${piece}/done`,
  fulfil: () => {},
};

beforeAll(async () => {
  app = await startTestApp({ kit: { actions: [action] } });
  // Eight characters (the shortest piece that counts) of its random part, the run holding the fewest
  // digits: the path's number masking would hide a part with seven, not a secret's.
  const random = app.secret.slice('kit-secret-'.length);
  const digitsIn = (text: string) => (text.match(/\d/g) ?? []).length;
  for (let at = 0; at + 8 <= random.length; at++) {
    const window = random.slice(at, at + 8);
    if (piece === '' || digitsIn(window) < digitsIn(piece)) piece = window;
  }
});
afterAll(async () => {
  await app?.close();
});

it("logs no piece of the client secret in the refused successPath's `returned` field", async () => {
  expect(piece).toHaveLength(8);
  expect((piece.match(/\d/g) ?? []).length, piece).toBeLessThan(7);
  const alice = await app.agent(seen).signIn('alice');
  const handoff = await alice.start('to_debug_url');
  const { sessionId } = await app.latestAttempt();
  const location = await alice.verifyOnHostedPage({ ...handoff, sessionId });
  const landing = await alice.request(location);
  expect(landing.headers.get('location')).toBeNull();
  const logged = app.logs.filter((line) => line.includes('successPath returned something other'));
  expect(logged.length).toBeGreaterThan(0);
  for (const line of logged) expect(line).not.toContain(piece);
});
