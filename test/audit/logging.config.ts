/**
 * An audit configuration module whose app (the sample app, in the audit's process) logs every
 * request on standard output, as console.log and morgan's default do.
 */
import type { AuditConfig } from '../../dist/testing/audit/command.js';
import { startSampleApp } from './sample-app.ts';

export default async function config(): Promise<AuditConfig> {
  const app = await startSampleApp({
    before: (express) => {
      express.use((req, _res, next) => {
        console.log(`${req.method} ${req.path}`);
        next();
      });
    },
  });
  return {
    ...app.auditOptions,
    close: async () => {
      process.stdout.write('closing the sample app\n');
      await app.close();
    },
  };
}
