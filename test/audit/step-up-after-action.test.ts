/**
 * A verification made for an action (a changed number, a grant) is no step-up: an app whose
 * onOutcome remembers "this user just verified" and lets the user past its guarded routes for ten
 * minutes opens them on a verification no guard asked for. The step-up checks verified only
 * through the guards, and passed such an app.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { userNamed } from '../support/users.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const ACTIONS = ['grant', 'change_phone', 'close_account'];

describe('a step-up granted by onOutcome on an action verified', () => {
  it('fails step-up.bound, naming the action whose verification opened the guarded page', async () => {
    // "The user just proved their phone: don't ask again for ten minutes."
    const verifiedAt = new Map<string, number>();
    const app = await startSampleApp({
      onOutcome: (event) => {
        if (event.outcome === 'fulfilled' && ACTIONS.includes(event.action)) verifiedAt.set(event.userRef, Date.now());
      },
      before: (express) => {
        express.get('/account', (req, res, next) => {
          const user = (req.session as { user?: string } | undefined)?.user;
          const at = user === undefined ? undefined : verifiedAt.get(userNamed(user).userRef);
          if (at === undefined || Date.now() - at > 600_000) return next();
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Account</title><p>Your account.</p>');
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration(app.auditOptions);
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['step-up.bound']);
    expect(table).toMatch(/after a verification of action grant, GET \/account \(scope see_account\) opened/);
  }, 120_000);
});
