/**
 * leak.handoff fails an app whose log keeps a handoff cut short: a debug line quoting its first 24
 * or 40 characters (of 43), or its last 24, is half of a single-use bearer credential or more, and
 * what is missing of it may be guessed in its 120 seconds when little is. Before the fix only whole
 * handoffs were searched for and these apps passed. A run shorter than half of a handoff is not
 * told apart from what every handoff of a service may share (a signed token's header), and fails
 * nothing; the app quoting only that passes.
 */
import type { Response } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { handoffForms, secretSpellingIn } from '../../testing/audit/secret.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const HX = /name="hx" value="([^"]*)"/;

/** An app logging part of each handoff its start answers (`cut` picks the part). */
async function appLoggingHandoffs(cut: (handoff: string) => string): Promise<SampleApp> {
  const app = await startSampleApp({
    before: (express, ctx) => {
      express.use((_req, res, next) => {
        const end = res.end.bind(res) as (...args: unknown[]) => Response;
        res.end = ((...args: unknown[]) => {
          const [chunk] = args;
          const handoff = typeof chunk === 'string' || Buffer.isBuffer(chunk) ? HX.exec(String(chunk))?.[1] : undefined;
          if (handoff !== undefined) ctx.logs.push(`debug start answered, handoff=${cut(handoff)}…`);
          return end(...args);
        }) as Response['end'];
        next();
      });
    },
  });
  apps.push(app);
  return app;
}

describe('leak.handoff, a handoff cut short in a log line', () => {
  it.each([
    ['its first 24 characters', (handoff: string) => handoff.slice(0, 24)],
    ['its first 40 characters', (handoff: string) => handoff.slice(0, 40)],
    ['its last 24 characters', (handoff: string) => handoff.slice(-24)],
  ])(
    '%s: fails',
    async (_part, cut) => {
      const app = await appLoggingHandoffs(cut);
      const report = await auditIntegration({ ...app.auditOptions, only: ['leak.handoff'] });
      // The mistake is real: the emulator's handoffs are 43 characters, and the log kept part of one.
      expect(app.logs.filter((line) => line.startsWith('debug start answered')).length).toBeGreaterThan(0);
      expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.handoff']);
      expect(formatAuditTable(report)).toMatch(/a handoff \(2\d characters or more of it, as is\) in log line/);
    },
    120_000,
  );

  it('its first 12 characters (less than half): passes', async () => {
    const app = await appLoggingHandoffs((handoff) => handoff.slice(0, 12));
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.handoff'] });
    expect(app.logs.filter((line) => line.startsWith('debug start answered')).length).toBeGreaterThan(0);
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
  }, 120_000);
});

describe('a handoff shaped as a signed token', () => {
  const header = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9';
  const handoff = `${header}.eyJzaWQiOiJzXzRmOWExYzdlIiwiZXhwIjoxNzY0NzcxMjAwfQ.Vt4nQ8wLz2KpR7xMb9cYs3HdQe1uJ0aF6gWy5iTo`;
  const forms = handoffForms(handoff);

  it("is not found in another token sharing only its header (the app's own session token)", () => {
    expect(secretSpellingIn(forms, `session=${header}.eyJ1aWQiOjQyfQ.c2lnbmF0dXJl`, true)).toBeUndefined();
  });

  it('is found cut to its first two thirds', () => {
    expect(secretSpellingIn(forms, `handoff=${handoff.slice(0, 80)}`, true)).toMatch(/characters or more of it/);
  });
});
