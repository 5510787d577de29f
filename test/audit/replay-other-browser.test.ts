/**
 * `replay.other-browser` proves what its title says: the return link opened in another browser is
 * not sent on, shows nothing of the attempt's owner (their name, the number they typed), and an
 * entered number becomes the owner's, never that browser's user's. Each app below made the old
 * check pass, which saw only that nothing was redirected and that the effect was counted once.
 */
import { randomBytes } from 'node:crypto';
import type { Request } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AuditAgent,
  auditIntegration,
  failedIds,
  formatAuditTable,
  type AuditOptions,
} from 'hosted-sms-verify-kit/testing';
import { userNamed } from '../support/users.ts';
import { startSampleApp, type CustomFlaw, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const signedIn = (req: Request) => (req.session as { user?: string } | undefined)?.user;
const sessionIdOf = (req: Request) => (typeof req.query.session_id === 'string' ? req.query.session_id : undefined);

/** The audit's options with the action named `first` first: the check starts the first action. */
function withFirst(options: AuditOptions, first: string): AuditOptions {
  const actions = [...options.actions].sort((a, b) => Number(b.name === first) - Number(a.name === first));
  return { ...options, actions };
}

async function audit(flaw: CustomFlaw | undefined, first?: string) {
  const app = await startSampleApp(flaw);
  apps.push(app);
  const options = first === undefined ? app.auditOptions : withFirst(app.auditOptions, first);
  const report = await auditIntegration({ ...options, only: ['replay.other-browser'] });
  const evidence = report.checks.flatMap((check) => check.evidence).join('\n');
  return { app, failed: failedIds(report), table: formatAuditTable(report), evidence };
}

/** A user of `app` who started `action` (typing `phone`), verified on the emulator: the return link. */
async function verifiedLink(app: SampleApp, action: string, phone?: string): Promise<{ name: string; link: string }> {
  const agent = new AuditAgent(app.url, () => {});
  const name = `owner${randomBytes(3).toString('hex')}`;
  const { csrf } = JSON.parse((await agent.postForm('/login', { user: name })).body) as { csrf: string };
  const fields = { _csrf: csrf, action, ...(phone === undefined ? {} : { phone }) };
  const start = await agent.postForm('/verify/start', fields, { origin: app.url, 'sec-fetch-site': 'same-origin' });
  const handoff = /name="hx" value="([^"]*)"/.exec(start.body)?.[1];
  if (handoff === undefined) throw new Error(`start answered ${start.status}`);
  const session = await app.emulator.control.sessionByHandoff(handoff);
  await app.emulator.control.completeSession(session.sessionId, 'verified');
  const returned = new URL(session.returnLocation);
  return { name, link: `${returned.pathname}${returned.search}` };
}

describe('replay.other-browser', () => {
  it("fails a landing that tells whoever opens the link whose verification it was (the owner's name)", async () => {
    const flaw: CustomFlaw = {
      // "Someone opened the link on another device: say whose verification it was."
      landing: (ctx) => async (req, res, next) => {
        const sessionId = sessionIdOf(req);
        const attempt = sessionId === undefined ? undefined : await ctx.kit.store.findAttemptBySessionId(sessionId);
        const user = signedIn(req);
        if (attempt === undefined || (user !== undefined && userNamed(user).userRef === attempt.userRef)) return next();
        res.send(`<!doctype html><title>Verified</title><p>${attempt.userRef.replace(/^user-/, '')} is verified.</p>`);
      },
    };
    const { app, failed, table } = await audit(flaw);
    // The mistake is real: a browser signed in as nobody is told the owner's name.
    const { name, link } = await verifiedLink(app, 'grant');
    expect((await new AuditAgent(app.url, () => {}).request(link)).body).toContain(`${name} is verified`);
    expect(failed, table).toEqual(['replay.other-browser']);
    expect(table).toContain("another user's browser was shown its owner's name");
    expect(table).toContain("no session's browser was shown its owner's name");
  }, 60_000);

  it('fails an app that saves the verified number on the account of whoever lands', async () => {
    const flaw: CustomFlaw = {
      // "Once the landing is done, the confirmed number goes on the signed-in account."
      landing: (ctx) => (req, res, next) => {
        const sessionId = sessionIdOf(req);
        const user = signedIn(req);
        if (sessionId !== undefined && user !== undefined) {
          res.on('finish', () => {
            void ctx.kit.store.findAttemptBySessionId(sessionId).then((attempt) => {
              if (attempt?.fulfilledAt != null && attempt.destination !== null)
                ctx.savePhone(userNamed(user).userRef, attempt.destination);
            });
          });
        }
        next();
      },
    };
    const { app, failed, table } = await audit(flaw, 'change_phone');
    // The mistake is real: another user who opens the link is given the owner's number.
    const { link } = await verifiedLink(app, 'change_phone', '+44 7400 100999');
    const other = new AuditAgent(app.url, () => {});
    await other.postForm('/login', { user: 'bystander' });
    await other.request(link);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const numberOf = app.auditOptions.actions.find((a) => a.name === 'change_phone')?.enteredNumber?.numberOf;
    expect(await numberOf?.('bystander')).toBe('+447400100999');
    expect(failed, table).toEqual(['replay.other-browser']);
    expect(table).toContain("change_phone made the owner's typed number the other user's");
  }, 60_000);

  it("passes the kit's own landing, and says when who the action ran for cannot be seen", async () => {
    const entered = await audit(undefined, 'change_phone');
    expect(entered.failed, entered.table).toEqual([]);
    expect(entered.evidence).not.toContain('who the action ran for is not seen: change_phone');
    const plain = await audit(undefined);
    expect(plain.failed, plain.table).toEqual([]);
    expect(plain.evidence).toContain('who the action ran for is not seen: grant has no enteredNumber');
  }, 60_000);
});
