/**
 * The audit as node:test cases (run by node-test-adapter.test.ts in a child process): the sample
 * app with the flaw named by AUDIT_FLAW, or none; AUDIT_NO_STEP_UP=1 leaves out its guarded routes
 * and the actions whose start requires a step-up; AUDIT_ONLY (ids, comma-separated) runs only those checks.
 */
import { after, before, describe, it } from 'node:test';
import { describeAudit } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type Flaw, type SampleApp } from './sample-app.ts';

let app: SampleApp | undefined;
after(async () => {
  await app?.close();
});

const only = process.env.AUDIT_ONLY?.split(',');

describeAudit(
  { describe, it, before },
  async () => {
    app = await startSampleApp((process.env.AUDIT_FLAW as Flaw | undefined) || undefined);
    if (process.env.AUDIT_NO_STEP_UP !== '1') return app.auditOptions;
    // An action whose start requires a step-up is left out, not described as one that does not: the
    // audit would start it without the grant it needs.
    const actions = app.auditOptions.actions.filter((action) => action.requireRecentVerification === undefined);
    return { ...app.auditOptions, stepUp: undefined, actions };
  },
  only === undefined ? {} : { only },
);
