/**
 * The size of a kept form, on SQLite and on PostgreSQL, counted in the bytes a store keeps (UTF-8),
 * not in characters: a form read by the app's own parser (a larger limit than the guard's) whose
 * fields hold 30,000 characters of three bytes each (90 KB) is refused as over 64 KB, nothing
 * kept, so a user's 20 kept requests hold about 1.3 MB at most; one of 60 KB is kept.
 */
import express from 'express';
import { expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { useStepUpApp } from '../support/step-up.ts';

describeEachAppStore('step-up: a kept form’s size in bytes', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions, (own, kit) => {
    own.post(
      '/letters',
      express.urlencoded({ extended: false, limit: '1mb' }),
      kit.requireRecentVerification({ scope: 'security', maxAge: 600 }),
      (req, res) => {
        res.json(req.body);
      },
    );
  });

  const keptBytes = async (userRef: string) =>
    (
      await suite.app.query<{ fields: unknown }>('SELECT fields FROM verify_kit_intents WHERE user_ref = $1', [userRef])
    ).map(({ fields }) => Buffer.byteLength(typeof fields === 'string' ? fields : JSON.stringify(fields)));

  it('a form of 90 KB in UTF-8 (30,000 characters of three bytes) is refused with 400, nothing kept', async () => {
    const user = await suite.app.agent().signIn('wide-letter');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const refused = await user.postForm('/letters', { text: '中'.repeat(30_000) }, sameSite);
    expect(refused.status).toBe(400);
    expect(refused.body).not.toContain('name="intent"');
    expect(await keptBytes('user-wide-letter')).toEqual([]);
    // 20,000 of them (60 KB) are kept.
    const kept = await user.postForm('/letters', { text: '中'.repeat(20_000) }, sameSite);
    expect(kept.status).toBe(200);
    expect(kept.body).toContain('name="intent"');
    const [bytes] = await keptBytes('user-wide-letter');
    expect(bytes).toBeGreaterThan(60_000);
    expect(bytes).toBeLessThanOrEqual(64 * 1024);
  });
});
