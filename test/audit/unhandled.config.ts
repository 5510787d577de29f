/**
 * An audit configuration module whose app (the sample app, in the audit's process) has a handler
 * that leaves a rejection nobody handles on every request with a `next` parameter, and a timer that
 * throws on the first: each error's message quotes the client secret (hex-encoded for the throw).
 * The first also leaves a rejection whose message quotes another error's stack.
 */
import type { AuditConfig } from '../../dist/testing/audit/command.js';
import { startSampleApp } from './sample-app.ts';

export default async function config(): Promise<AuditConfig> {
  let secret = '';
  let thrown = false;
  const app = await startSampleApp({
    before: (express) => {
      express.use((req, _res, next) => {
        const wanted = req.query.next;
        if (typeof wanted === 'string') {
          // "Remember where they were going": a promise left floating.
          void Promise.reject(new Error(`could not remember ${wanted} for client ${secret}`));
          if (!thrown) {
            thrown = true;
            // An error wrapping another with its stack, as "caused by" messages are often written.
            const cause = new Error('session store closed');
            void Promise.reject(new Error(`could not keep next\n${cause.stack ?? ''}`));
            setImmediate(() => {
              throw new TypeError(`bad next for ${Buffer.from(secret).toString('hex')}`);
            });
          }
        }
        next();
      });
    },
  });
  secret = app.clientSecret;
  return { ...app.auditOptions, close: () => app.close() };
}
