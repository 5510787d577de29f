/**
 * An audit configuration module whose close() ends the sample app (in the audit's process) and
 * leaves a promise that rejects a moment later, quoting the client secret: a database pool's query
 * still in flight, failing once the pool has ended.
 */
import type { AuditConfig } from '../../dist/testing/audit/command.js';
import { startSampleApp } from './sample-app.ts';

export default async function config(): Promise<AuditConfig> {
  const app = await startSampleApp();
  const secret = app.clientSecret;
  return {
    ...app.auditOptions,
    close: async () => {
      await app.close();
      setTimeout(() => void Promise.reject(new Error(`pool for client ${secret} has ended`)), 300);
    },
  };
}
