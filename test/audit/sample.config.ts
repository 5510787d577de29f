/**
 * An audit configuration module (for `hosted-sms-verify-kit audit --config`): starts the sample app
 * (with the flaw AUDIT_FLAW names); its close() fails with the message AUDIT_CLOSE_FAILS gives.
 */
import type { AuditConfig } from '../../dist/testing/audit/command.js';
import { startSampleApp, type Flaw } from './sample-app.ts';

export default async function config(env: Record<string, string | undefined>): Promise<AuditConfig> {
  const app = await startSampleApp((env.AUDIT_FLAW as Flaw | undefined) || undefined);
  return {
    ...app.auditOptions,
    async close() {
      await app.close();
      if (env.AUDIT_CLOSE_FAILS !== undefined) throw new Error(env.AUDIT_CLOSE_FAILS);
    },
  };
}
