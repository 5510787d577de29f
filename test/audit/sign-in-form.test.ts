/**
 * A sign-in form's `fields(user)` may be async: an app on PostgreSQL creates the audit's user with
 * an awaited query before the form is sent. Its rejection fails the run's sign-in with one sentence.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable, type SignInForm } from 'hosted-sms-verify-kit/testing';
import { startDemoTarget, type DemoTarget } from './demo-target.ts';

let target: DemoTarget | undefined;
afterAll(async () => {
  await target?.close();
});

describe("a sign-in form's async fields", () => {
  it('are awaited: the user is created first (an awaited query), then the form is sent and the checks run', async () => {
    target = await startDemoTarget();
    const form = target.options.signIn as SignInForm;
    const created: string[] = [];
    const report = await auditIntegration({
      ...target.options,
      signIn: {
        ...form,
        // As `await pool.query('INSERT INTO users ...')` would: the user exists only after a turn.
        fields: async (user) => {
          await delay(5);
          created.push(user);
          return form.fields(user);
        },
      },
      only: ['cookie.flags', 'csrf.no-token'],
    });
    expect(report.stopped, formatAuditTable(report)).toBeUndefined();
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
    expect(created.length).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it('that reject stop the run with one sentence naming them', async () => {
    target ??= await startDemoTarget();
    const form = target.options.signIn as SignInForm;
    const report = await auditIntegration({
      ...target.options,
      signIn: { ...form, fields: () => Promise.reject(new Error('users table is locked')) },
      only: ['cookie.flags'],
    });
    expect(report.stopped).toMatch(/your signIn form's fields\('[^']+'\) failed: users table is locked$/);
  }, 120_000);
});
