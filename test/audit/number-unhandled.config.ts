/**
 * An audit configuration module whose app (the sample app, in the audit's process) leaves a
 * rejection nobody handles on every start that types a number, its message quoting the number
 * ("could not text +44 7400 1…"), as an integrator's own error message may.
 */
import type { AuditConfig } from '../../dist/testing/audit/command.js';
import express from 'express';
import { startSampleApp } from './sample-app.ts';

export default async function config(): Promise<AuditConfig> {
  const sample = await startSampleApp({
    before: (app) => {
      app.post('/verify/start', express.urlencoded({ extended: false }), (req, _res, next) => {
        const { phone } = req.body as { phone?: unknown };
        if (typeof phone === 'string') void Promise.reject(new Error(`could not text ${phone} yet`));
        next();
      });
    },
  });
  return { ...sample.auditOptions, close: () => sample.close() };
}
