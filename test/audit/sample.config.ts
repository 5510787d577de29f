/** An audit configuration module (for `hosted-sms-verify-kit audit --config`): starts the sample app. */
import type { AuditConfig } from '../../dist/testing/audit/command.js';
import { startSampleApp, type Flaw } from './sample-app.ts';

export default async function config(env: Record<string, string | undefined>): Promise<AuditConfig> {
  const app = await startSampleApp((env.AUDIT_FLAW as Flaw | undefined) || undefined);
  return { ...app.auditOptions, close: () => app.close() };
}
