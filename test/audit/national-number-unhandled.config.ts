/**
 * An audit configuration module whose app (the sample app, in the audit's process) leaves a
 * rejection nobody handles on every start of its `grant` action, its message quoting the signed-in
 * user's own number in national form ("could not text (555) 012-3456"), as a US app's own error
 * message may: a number the audit never typed, without its `+`.
 */
import type { AuditConfig } from '../../dist/testing/audit/command.js';
import express from 'express';
import { userNamed } from '../support/users.ts';
import { startSampleApp } from './sample-app.ts';

export default async function config(): Promise<AuditConfig> {
  const sample = await startSampleApp({
    before: (app) => {
      app.post('/verify/start', express.urlencoded({ extended: false }), (req, _res, next) => {
        const user = (req.session as { user?: string }).user;
        const { action } = req.body as { action?: unknown };
        if (action === 'grant' && user !== undefined) {
          const d = userNamed(user).destination.slice(2);
          void Promise.reject(new Error(`could not text (${d.slice(0, 3)}) ${d.slice(3, 6)}-${d.slice(6)} yet`));
        }
        next();
      });
    },
  });
  return { ...sample.auditOptions, close: () => sample.close() };
}
