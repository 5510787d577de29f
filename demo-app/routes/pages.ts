/** The signed-in user's pages: home, activity, the verifications list, and the actions' success pages. */
import type express from 'express';
import { maskDestination, type VerificationKit } from 'hosted-sms-verify-kit';
import type { DemoReads } from '../data.ts';
import { CHANGE_PAYOUT, CHANGE_PHONE, CONFIRM_PHONE, confirmedNothing } from '../domain.ts';
import { demoTexts } from '../i18n.ts';
import { activityPage } from '../views/activity.ts';
import { homePage } from '../views/home.ts';
import { verifiedPage } from '../views/verified.ts';
import { verificationsPage } from '../views/verifications.ts';
import { viewer, withUser } from './signed-in.ts';

export function mountAccountPages(
  app: express.Express,
  queries: DemoReads,
  kit: VerificationKit<unknown>,
  now: () => number,
): void {
  app.get(
    '/',
    withUser(queries, async (req, res, user) => {
      res.send(
        homePage({
          t: demoTexts(req),
          viewer: viewer(req, user),
          user,
          payout: await queries.payoutAccount(user.id),
          kitCsrf: kit.csrfToken(req),
          startPath: '/verify/start',
        }),
      );
    }),
  );

  app.get(
    '/activity',
    withUser(queries, async (req, res, user) => {
      const entries = await queries.activity(user.id);
      const emails = await queries.outbox(user.id);
      res.send(activityPage({ t: demoTexts(req), viewer: viewer(req, user), entries, emails }));
    }),
  );

  // The kit's read API for support screens: this user's attempts, outcome, age and who settled them.
  app.get(
    '/verifications',
    withUser(queries, async (req, res, user) => {
      const attempts = await kit.attempts.find({ userRef: user.id, limit: 50 });
      res.send(verificationsPage({ t: demoTexts(req), viewer: viewer(req, user), attempts, now: now() }));
    }),
  );
}

/** The actions' successPaths: the kit redirects here after fulfilment; the page reads the result back. */
export function mountVerifiedPages(app: express.Express, queries: DemoReads, kit: VerificationKit<unknown>): void {
  app.get(
    '/verified/phone',
    withUser(queries, async (req, res, user) => {
      const phoneActions = [CONFIRM_PHONE, CHANGE_PHONE];
      const activity = await queries.activity(user.id);
      const latest = activity.find((entry) => phoneActions.includes(entry.action));
      // The kit's one-time flash: present only on arrival from this user's landing.
      const landed = kit.attempts.takeLanded(req);
      const arrived = landed !== undefined && phoneActions.includes(landed.action) ? landed : undefined;
      // A confirmation of a number the user no longer has was fulfilled, yet confirmed nothing.
      const landedOnNothing =
        arrived?.action === CONFIRM_PHONE &&
        activity.some((entry) => entry.sessionId === arrived.sessionId && confirmedNothing(entry.detail));
      const confirmed = user.verifiedPhone === user.phone && user.phoneVerifiedAt !== null && !landedOnNothing;
      const t = demoTexts(req);
      // Masked: the number is shown in full only in the form it is typed in.
      const masked = maskDestination(user.phone);
      res.send(
        verifiedPage({
          t,
          viewer: viewer(req, user),
          ok: confirmed,
          title: confirmed ? t.verified.phoneTitle : t.verified.phoneNotConfirmedTitle,
          text:
            user.verifiedPhone === user.phone && user.phoneVerifiedAt !== null
              ? t.verified.phoneText(masked)
              : t.verified.phoneNotConfirmedText(masked),
          latest,
          ...(arrived === undefined
            ? {}
            : { landed: t.verified.phoneLanded[landedOnNothing ? 'notCurrent' : arrived.fulfilment] }),
        }),
      );
    }),
  );

  app.get(
    '/verified/payout',
    withUser(queries, async (req, res, user) => {
      const latest = (await queries.activity(user.id)).find((entry) => entry.action === CHANGE_PAYOUT);
      const account = await queries.payoutAccount(user.id);
      const t = demoTexts(req);
      res.send(
        verifiedPage({
          t,
          viewer: viewer(req, user),
          title: t.verified.payoutTitle,
          text:
            account === undefined ? t.verified.payoutUpdated : t.verified.payoutText(account.accountNumber.slice(-4)),
          latest,
        }),
      );
    }),
  );
}
