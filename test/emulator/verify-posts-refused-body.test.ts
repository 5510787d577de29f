/**
 * The emulator's `stats.verifyPosts` counts every POST to verifyUrl, accepted or not, as its README
 * says: one whose form the body parser refuses (more than 20 fields, a body above 8 kB) was answered
 * 400 before it was counted, so a test counting an app's posts of its handoff read 0.
 */
import { expect, it } from 'vitest';
import { WEB_CLIENT, newSession, useTestEmulator } from '../support/emulator.ts';
import { loopbackFetch } from '../../testing/loopback-fetch.ts';

const emulator = useTestEmulator({}, { resetEach: true });

it('a POST to verifyUrl refused for its form body is still one verify post', async () => {
  const { verifyUrl, handoff } = await newSession(emulator.url, WEB_CLIENT);
  const fields = new URLSearchParams({ hx: handoff });
  for (let i = 0; i < 25; i++) fields.set(`extra${i}`, 'x');
  const tooManyFields = await loopbackFetch(verifyUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: fields.toString(),
  });
  expect(tooManyFields.status).toBe(400);
  const tooLarge = await loopbackFetch(verifyUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ hx: handoff, pad: 'x'.repeat(9000) }).toString(),
  });
  expect(tooLarge.status).toBe(400);
  expect((await emulator.control.stats()).verifyPosts, 'POSTs to verifyUrl counted').toBe(2);
});
