/**
 * A guarded form holding a lone UTF-16 surrogate, on SQLite and on PostgreSQL: a latin-1 form read
 * by the app's own parser with numeric entities on (`&#55296;` reads as one), which PostgreSQL's JSONB
 * cannot keep. It is refused with a 400 on every store alike, nothing kept, as a NUL is; a form
 * whose entities read as whole characters is kept as usual.
 */
import express from 'express';
import { expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { useStepUpApp } from '../support/step-up.ts';

/** body-parser 2's options for a latin-1 form (Express 5); Express 4's body-parser 1 has no such options. */
const LATIN1_FORM = { extended: true, defaultCharset: 'iso-8859-1', interpretNumericEntities: true };

describeEachAppStore('step-up: a kept form holding a lone surrogate', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions, (own, kit) => {
    own.post(
      '/legacy/notes',
      express.urlencoded(LATIN1_FORM as Parameters<typeof express.urlencoded>[0]),
      kit.requireRecentVerification({ scope: 'security', maxAge: 600 }),
      (req, res) => {
        res.json(req.body);
      },
    );
  });

  const keptOf = async (userRef: string) =>
    Number(
      (
        await suite.app.query<{ n: number | string }>(
          'SELECT count(*) AS n FROM verify_kit_intents WHERE user_ref = $1',
          [userRef],
        )
      )[0]!.n,
    );

  it('is refused with 400 on every store, nothing kept; a form with whole characters is kept', async () => {
    const user = await suite.app.agent().signIn('surrogate');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    // `&#55296;` (a high surrogate alone) and `&#56320;` (a low one).
    for (const body of ['note=%26%2355296%3B', 'title=ok&note=x%26%2356320%3B']) {
      const refused = await user.postForm('/legacy/notes', body, sameSite);
      expect(refused.status).toBe(400);
      expect(refused.body).not.toContain('name="intent"');
    }
    expect(await keptOf('user-surrogate')).toBe(0);
    // `&#233;` (é) and `&#119070;` (a character outside the BMP, a surrogate pair) are kept.
    const kept = await user.postForm('/legacy/notes', 'note=%26%23233%3B%26%23119070%3B', sameSite);
    expect(kept.status).toBe(200);
    expect(kept.body).toContain('name="intent"');
    expect(await keptOf('user-surrogate')).toBe(1);
  });
});
