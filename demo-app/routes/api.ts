/** For scripted checks: the signed-in user's profile and fulfilled actions, as JSON. */
import type express from 'express';
import { maskDestination } from 'hosted-sms-verify-kit';
import type { DemoReads } from '../data.ts';
import type { ActivityEntry, DemoUser, PayoutAccount } from '../db.ts';
import { ACTION_LABELS, maskAccountNumber } from '../domain.ts';
import { signedInUser } from './signed-in.ts';

export function mountApi(app: express.Express, queries: DemoReads): void {
  app.get('/api/me', async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const user = await signedInUser(queries, req);
    if (user === undefined) {
      res.status(401).json({ error: 'not_signed_in', message: 'Sign in at /signin first.' });
      return;
    }
    const payout = await queries.payoutAccount(user.id);
    const activity = await queries.activity(user.id);
    res.json(meBody(user, payout, activity));
  });
}

function meBody(user: DemoUser, payout: PayoutAccount | undefined, activity: ActivityEntry[]) {
  return {
    user: {
      id: user.id,
      name: user.name,
      email: user.email,
      // Masked like the account number: a full number appears only in the form it was typed into.
      phone: maskDestination(user.phone),
      phoneVerified: user.verifiedPhone === user.phone && user.phoneVerifiedAt !== null,
      phoneVerifiedAt: user.phoneVerifiedAt === null ? null : new Date(user.phoneVerifiedAt).toISOString(),
      payoutAccount:
        payout === undefined
          ? null
          : { masked: maskAccountNumber(payout.accountNumber), changedAt: new Date(payout.changedAt).toISOString() },
    },
    actions: activity.map((entry) => ({
      sessionId: entry.sessionId,
      action: entry.action,
      label: ACTION_LABELS[entry.action] ?? entry.action,
      detail: entry.detail,
      at: new Date(entry.at).toISOString(),
    })),
  };
}
