/**
 * entered.no-early-write fails an app that writes a typed number when its attempt's landing comes
 * back while the service still says pending (saved "provisionally", undone only on failed or
 * expired): the check landed only a failed attempt, so a never-verified number left as the user's
 * passed. It now lands a pending attempt too and expects the number held unchanged.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  AuditAgent,
  auditIntegration,
  emulatorControl,
  failedIds,
  formatAuditTable,
  type AuditOptions,
} from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp, type SampleContext } from './sample-app.ts';
import { userNamed } from '../support/users.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** The app stores "no number" as '' (its column is NOT NULL): its numberOf reads '' as none. */
function emptyIsNone(options: AuditOptions): AuditOptions['actions'] {
  return options.actions.map((action) => {
    const numberOf = action.enteredNumber?.numberOf;
    if (numberOf === undefined) return action;
    return {
      ...action,
      enteredNumber: {
        numberOf: async (user: string) => {
          const held = await numberOf(user);
          return held === '' ? null : held;
        },
      },
    };
  });
}

async function provisionalApp(): Promise<{ app: SampleApp; ctx: () => SampleContext }> {
  const previous = new Map<string, { userRef: string; phone: string | null }>();
  let ctxRef: SampleContext | undefined;
  const app = await startSampleApp({
    landing: (ctx) => {
      ctxRef = ctx;
      return async (req, _res, next) => {
        const { state, session_id: sessionId } = req.query;
        if (typeof state === 'string' && typeof sessionId === 'string') {
          const attempt = await ctx.kit.store.findAttemptByState(state);
          if (
            attempt !== undefined &&
            attempt.sessionId === sessionId &&
            attempt.action === 'change_phone' &&
            attempt.destination !== null &&
            !previous.has(sessionId)
          ) {
            // "Show the new number right away; onOutcome undoes it if the code fails."
            previous.set(sessionId, { userRef: attempt.userRef, phone: ctx.phoneOf(attempt.userRef) });
            ctx.savePhone(attempt.userRef, attempt.destination);
          }
        }
        next();
      };
    },
    onOutcome: (event) => {
      if (event.outcome !== 'failed' && event.outcome !== 'expired') return;
      const before = previous.get(event.sessionId);
      if (before === undefined || ctxRef === undefined) return;
      ctxRef.savePhone(before.userRef, before.phone ?? '');
    },
  });
  apps.push(app);
  return {
    app,
    ctx: () => {
      if (ctxRef === undefined) throw new Error('no landing mounted');
      return ctxRef;
    },
  };
}

describe('a typed number saved on a landing that is still pending', () => {
  it("(the flaw is real) a pending landing makes the never-verified number the user's", async () => {
    const { app, ctx } = await provisionalApp();
    const agent = new AuditAgent(app.url, () => undefined, 20_000, { 'x-forwarded-proto': 'https' });
    const login = await agent.postForm('/login', { user: 'pendinguser' });
    const { csrf } = JSON.parse(login.body) as { csrf: string };
    const typed = '+447400199999';
    const start = await agent.postForm(
      '/verify/start',
      { action: 'change_phone', phone: typed, _csrf: csrf },
      { origin: new URL(app.url).origin, 'sec-fetch-site': 'same-origin' },
    );
    const hx =
      /name="hx"[^>]*value="([^"]+)"/.exec(start.body)?.[1] ?? /value="([^"]+)"[^>]*name="hx"/.exec(start.body)?.[1];
    expect(hx, start.body).toBeDefined();
    const control = emulatorControl(app.emulator.url);
    const session = await control.sessionByHandoff(hx ?? '');
    expect(session.status).toBe('pending');
    const landing = await agent.request(session.returnLocation);
    expect(landing.headers['x-verify-kit-outcome']).toBe('pending');
    expect((await control.sessionByHandoff(hx ?? '')).status).toBe('pending');
    expect(ctx().phoneOf(userNamed('pendinguser').userRef)?.replace(/\D/g, '')).toBe('447400199999');
  }, 60_000);

  it('fails entered.no-early-write (or forged.unverified)', async () => {
    const { app } = await provisionalApp();
    const report = await auditIntegration({
      ...app.auditOptions,
      actions: emptyIsNone(app.auditOptions),
      only: ['entered.no-early-write', 'forged.unverified'],
    });
    expect(failedIds(report), formatAuditTable(report)).not.toEqual([]);
  }, 120_000);
});
