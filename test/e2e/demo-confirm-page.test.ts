/**
 * The demo's phone page and its emails say only what a confirmation did. A "Confirm your phone
 * number" started on the old number and landing after a change of number confirms nothing (its
 * fulfil changes nothing): neither the page it lands on nor its email may say it confirmed the
 * phone, in English or in French; and a number never confirmed is not shown as confirmed. Over real
 * HTTP (the demo app and the emulator, no browser), on SQLite and on PostgreSQL.
 */
import type { Database } from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, formToken } from '../support/agent.ts';
import { startStack, type Stack } from '../support/demo-stack.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { demoSite, latestAttempt } from '../support/security-stack.ts';
import { waitFor } from '../support/wait-for.ts';

const OLD_NUMBER = '+15550100001';
const NEW_NUMBER = '+15550100077';

for (const store of ['SQLite', 'PostgreSQL'] as const) {
  describe.skipIf(store === 'PostgreSQL' && postgresUnavailable !== undefined)(`the demo on ${store}`, () => {
    let stack: Stack;
    let database: TestDatabase | undefined;
    beforeAll(async () => {
      if (store === 'PostgreSQL') database = await createTestDatabase({ max: 4 });
      stack = await startStack(database === undefined ? {} : { databaseUrl: database.url });
    });
    afterAll(async () => {
      await stack?.close();
      await database?.drop();
    });

    /** One statement on the demo's database, whichever it is ($1.. placeholders). */
    async function sql(text: string, values: unknown[]): Promise<Record<string, unknown>[]> {
      if (database !== undefined) return (await database.pool.query(text, values)).rows;
      const statement = (stack.demo.db as Database).prepare(text.replace(/\$\d+/g, '?'));
      return statement.reader
        ? (statement.all(...values) as Record<string, unknown>[])
        : (statement.run(...values), []);
    }

    /** Starts confirm_phone on Alice's old number, then moves her to NEW_NUMBER (verified) before it lands. */
    async function staleConfirmation(
      language: string,
    ): Promise<{ landed: string; page: string; email: unknown; listed: string }> {
      const agent = await new Agent(demoSite(stack)).signIn('alice');
      // Signed in, the demo's tables exist (on PostgreSQL, its migration has run).
      await sql('UPDATE demo_users SET phone = $1 WHERE id = $2', [OLD_NUMBER, 'usr_alice']);
      const home = await agent.request('/');
      const csrf = formToken(home.body, /<form method="post" action="\/verify\/start">\s*/)!;
      expect((await agent.postStart({ _csrf: csrf, action: 'confirm_phone' })).status).toBe(200);
      const { sessionId, state } = await latestAttempt(stack);
      // Stands in for change_phone fulfilled in another tab: the new number is the verified one.
      await sql('UPDATE demo_users SET phone = $1, verified_phone = $2, phone_verified_at = $3 WHERE id = $4', [
        NEW_NUMBER,
        NEW_NUMBER,
        Date.now(),
        'usr_alice',
      ]);
      expect((await stack.control.complete(sessionId, { outcome: 'verified' })).status).toBe(200);
      const landing = await agent.landFor(sessionId, state, { 'accept-language': language });
      expect(landing.status).toBe(303);
      const page = await agent.request('/verified/phone', { headers: { 'accept-language': language } });
      const landed = /<p id="landed" role="status"><strong>([^<]*)<\/strong>/.exec(page.body)?.[1] ?? '';
      // The email is written by the after-commit onOutcome hook, which may finish after the landing answered.
      let email: Record<string, unknown> | undefined;
      await waitFor(
        async () => {
          [email] = await sql('SELECT subject FROM demo_outbox WHERE session_id = $1', [sessionId]);
          return email !== undefined;
        },
        5000,
        'the outcome email',
      );
      // Its row on the Verifications page: the kit fulfilled it, and the action changed nothing.
      const verifications = await agent.request('/verifications', { headers: { 'accept-language': language } });
      const row = new RegExp(`<tr data-session-id="${sessionId}"[^>]*>([\\s\\S]*?)</tr>`).exec(verifications.body);
      return { landed, page: page.body, email: email?.subject, listed: row?.[1] ?? '' };
    }

    it('a confirmation landing after a change of number says nothing was confirmed, on the page and in its email (English)', async () => {
      const { landed, page, email, listed } = await staleConfirmation('en');
      expect(landed).toBe('Nothing was confirmed: this verification was for a number that is no longer yours.');
      expect(page).not.toContain('Phone confirmed');
      expect(email).toBe('Your phone number was not confirmed');
      // The Verifications page says what the verification proved, not that anything was applied.
      expect(listed).toContain('<td>Verified</td>');
      expect(listed).not.toMatch(/applied/i);
    });

    it('a confirmation landing after a change of number says nothing was confirmed (French)', async () => {
      const { landed, page, listed } = await staleConfirmation('fr');
      expect(landed).toBe('Rien n’a été confirmé : cette vérification portait sur un numéro qui n’est plus le vôtre.');
      expect(page).not.toContain('Téléphone confirmé');
      expect(listed).toContain('<td>Vérifiée</td>');
      expect(listed).not.toMatch(/appliqu/i);
    });

    it('a number never confirmed: the phone page says it is not confirmed, not that the user confirmed it', async () => {
      const bob = await new Agent(demoSite(stack)).signIn('bob');
      for (const [language, said, unsaid] of [
        ['en', 'Your number ••\u00a002 is not confirmed yet.', 'You confirmed that'],
        ['fr', 'Votre numéro ••\u00a002 n’est pas encore confirmé.', 'Vous avez confirmé que'],
      ] as const) {
        const page = await bob.request('/verified/phone', { headers: { 'accept-language': language } });
        expect(page.status).toBe(200);
        expect(page.body).toContain(said);
        expect(page.body).not.toContain(unsaid);
      }
    });
  });
}
