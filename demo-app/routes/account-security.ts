/**
 * The Security page and its form, the demo's own routes behind the kit's step-up guard
 * (kit.requireRecentVerification): the page needs a verification from the last 10 minutes; the
 * form that replaces the recovery codes needs its own, bound to the account (bindTo), and runs its
 * handler once after the user confirms. The guard comes before the demo's CSRF check: a kept form
 * comes back with its original fields (and the demo's token in them) in place of the kit's page.
 */
import { randomUUID } from 'node:crypto';
import express from 'express';
import type { VerificationKit } from 'hosted-sms-verify-kit';
import { demoCsrfValid } from '../csrf.ts';
import type { DemoData, DemoReads } from '../data.ts';
import { NEW_RECOVERY_CODES, SEE_SECURITY } from '../domain.ts';
import { demoTexts } from '../i18n.ts';
import { currentRecoveryCodes, replacementsOf } from '../recovery-codes.ts';
import { securityPage } from '../views/security.ts';
import { signedInUser, viewer, withUser } from './signed-in.ts';

export function mountSecurityPages(
  app: express.Express,
  data: Pick<DemoData, 'reads' | 'recordOwnActivity'>,
  kit: VerificationKit<unknown>,
  options: { secret: string; now: () => number },
): void {
  const queries: DemoReads = data.reads;
  // Signed-out visitors go to the sign-in page, as on every other page, before the guard asks anything.
  const signedInOnly: express.RequestHandler = (req, res, next) => {
    Promise.resolve(signedInUser(queries, req)).then((user) => {
      if (user === undefined) res.redirect(303, '/signin');
      else next();
    }, next);
  };

  app.get(
    '/security',
    signedInOnly,
    kit.requireRecentVerification({ scope: SEE_SECURITY, maxAge: 10 * 60 }),
    withUser(queries, async (req, res, user) => {
      const codes = await currentRecoveryCodes(queries, options.secret, user.id);
      res.send(
        securityPage({ t: demoTexts(req), viewer: viewer(req, user), codes, replaced: req.query.replaced === '1' }),
      );
    }),
  );

  app.post(
    '/security/recovery-codes',
    express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 }),
    signedInOnly,
    kit.requireRecentVerification({
      scope: NEW_RECOVERY_CODES,
      maxAge: 5 * 60,
      // A grant for one account never replaces another account's codes.
      bindTo: (req) => req.session.userId,
    }),
    async (req, res) => {
      const user = await signedInUser(queries, req);
      if (user === undefined || !demoCsrfValid(req)) {
        res.status(403).type('text').send('Forbidden');
        return;
      }
      const generation = (await replacementsOf(queries, user.id)) + 1;
      await data.recordOwnActivity({
        userId: user.id,
        sessionId: `codes_${randomUUID()}`,
        action: NEW_RECOVERY_CODES,
        detail: `Set ${generation}`,
        at: options.now(),
      });
      res.redirect(303, '/security?replaced=1');
    },
  );
}
