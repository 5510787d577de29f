/**
 * A guarded page asked for several times at once (a double click, tabs restored together) keeps one
 * intent, as one asked again later does: each answer offers the same one, and the user's kept
 * requests hold one row for it, not one per request. On SQLite and PostgreSQL.
 */
import { expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, useStepUpApp } from '../support/step-up.ts';
import { USERS } from '../support/users.ts';

const AT_ONCE = 12;

describeEachAppStore('a guarded page asked for at once', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions);

  it(`keeps one intent for ${AT_ONCE} identical requests, and every page offers it`, async () => {
    const bob = await suite.app.agent().signIn('bob');
    const path = '/security?tab=at-once';
    const pages = await Promise.all(Array.from({ length: AT_ONCE }, () => bob.request(path)));
    for (const page of pages) expect(page.body).toContain('Confirm it’s you');
    const offered = new Set(pages.map((page) => confirmForm(page.body).intent));
    const rows = await suite.app.query<{ intent_id: string }>(
      'SELECT intent_id FROM verify_kit_intents WHERE user_ref = $1 AND path = $2',
      [USERS.bob!.userRef, path],
    );
    expect(rows.length).toBe(1);
    expect([...offered]).toEqual([rows[0]!.intent_id]);
  });
});
