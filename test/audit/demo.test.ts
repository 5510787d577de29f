/**
 * The demo passes every check of the integration audit, each as its own test case through the
 * vitest adapter (describeAudit), with its real start limits, behind a loopback proxy; none may go unrun.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { AUDIT_CHECK_IDS, describeAudit } from 'hosted-sms-verify-kit/testing';
import { startDemoTarget, type DemoTarget } from './demo-target.ts';

let target: DemoTarget | undefined;
afterAll(async () => {
  await target?.close();
});

describeAudit(
  { describe, it, beforeAll },
  async () => {
    target = await startDemoTarget();
    return target.options;
  },
  // Every option is given: a check that does not run (a lost clock or stepUp) fails here.
  { name: `the demo passes the audit (${AUDIT_CHECK_IDS.length} checks)`, requireEveryCheck: true },
);
