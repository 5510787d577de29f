/**
 * The create answer holds "a binding field" whose value is `form_post`; the spec does not name it.
 * The emulator calls it `binding`, and a test can give it another name
 * (`injectFaults({ bindingField })`), so an integration that depends on the emulator's name is
 * found here rather than against the service.
 */
import { describe, expect, it } from 'vitest';
import { WEB_CLIENT, createSession, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

describe('the name of the binding field, which the spec does not state', () => {
  it('is binding by default', async () => {
    const created = await createSession(emulator.url, WEB_CLIENT);
    expect(created.body).toMatchObject({ binding: 'form_post' });
  });

  it('is the name a test chose with bindingField, and binding is then absent', async () => {
    expect((await emulator.control.injectFaults({ bindingField: 'openWith' })).bindingField).toBe('openWith');
    const created = await createSession(emulator.url, WEB_CLIENT);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ isSuccess: true, openWith: 'form_post', expiresInSeconds: 120 });
    expect(created.body).not.toHaveProperty('binding');
  });

  it('refuses a name the answer already uses, or one that is not a field name, and reset restores binding', async () => {
    for (const bindingField of ['handoff', 'isSuccess', '', '1x', 'a b', '__proto__x'.repeat(10), 7]) {
      expect((await emulator.control.setFaults({ bindingField })).status).toBe(400);
    }
    await emulator.control.injectFaults({ bindingField: 'openWith' });
    await emulator.control.reset();
    expect((await createSession(emulator.url, WEB_CLIENT)).body).toMatchObject({ binding: 'form_post' });
  });
});
