/**
 * An audit configuration module whose app (the sample app, in the audit's process), while the
 * configuration still starts it, leaves a promise that rejects quoting the client secret: a warm-up
 * call whose error names the credentials it used. The secret comes from the configuration itself
 * (a secret store), not the environment.
 */
import type { AuditConfig } from '../../dist/testing/audit/command.js';
import { startSampleApp } from './sample-app.ts';

export default async function config(): Promise<AuditConfig> {
  const app = await startSampleApp();
  void Promise.reject(new Error(`warm-up failed for client ${app.clientSecret}`));
  // The rest of the start (a cache filled, a queue joined) takes a moment.
  await new Promise((resolve) => setTimeout(resolve, 50));
  return { ...app.auditOptions, close: () => app.close() };
}
