/**
 * The demo app as an audit target: createDemoApp on http://localhost with its own limits, behind a
 * loopback proxy (trust proxy), on the audit's shared clock, wired to an emulator of its own. The
 * audit's users are created in the demo's database when first signed in, each with its own phone.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestClock, startEmulator, type AuditOptions } from 'hosted-sms-verify-kit/testing';
import { createDemoApp } from '../../demo-app/app.ts';
import { CHANGE_PHONE, CHANGE_PHONE_STEP_UP, NEW_RECOVERY_CODES, SEE_SECURITY } from '../../demo-app/domain.ts';
import { closeServer, listen } from '../support/listen.ts';
import { userNamed } from '../support/users.ts';

export interface DemoTarget {
  options: AuditOptions;
  close(): Promise<void>;
}

export async function startDemoTarget(): Promise<DemoTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'audit-demo-'));
  const server = createServer();
  const port = await listen(server);
  const appUrl = `http://localhost:${port}`;
  const returnUrl = `${appUrl}/verify/return`;
  const clientId = 'demo-client';
  const clientSecret = `audit-${randomBytes(16).toString('hex')}`;
  const clock = createTestClock();
  const emulator = await startEmulator({
    port: 0,
    clients: [{ clientId, secret: clientSecret, returnUrl }],
    clock,
    log: () => {},
  });
  const logs: string[] = [];
  const line = (level: string) => (obj: Record<string, unknown>, msg?: string) =>
    logs.push(JSON.stringify({ level, msg, ...obj }));
  const demo = createDemoApp({
    verifyBaseUrl: emulator.url,
    clientId,
    clientSecret,
    returnUrl,
    databasePath: join(dir, 'demo.sqlite'),
    sessionSecret: randomBytes(16).toString('hex'),
    trustProxy: 'loopback',
    logger: { info: line('info'), warn: line('warn'), error: line('error') },
    now: clock.now,
  });
  server.on('request', demo.app);
  const addUser = demo.db.prepare('INSERT OR IGNORE INTO demo_users (id, name, email, phone) VALUES (?, ?, ?, ?)');
  const activity = demo.db.prepare('SELECT COUNT(*) AS n FROM demo_activity WHERE session_id = ?');
  const phoneOf = demo.db.prepare('SELECT phone FROM demo_users WHERE id = ?');
  const activityOf = demo.db.prepare('SELECT COUNT(*) AS n FROM demo_activity WHERE user_id = ? AND action = ?');

  const options: AuditOptions = {
    appUrl,
    emulatorUrl: emulator.url,
    clientId,
    clientSecret,
    // The demo's own sign-in form; its seeded users are few, so each audit user is added first.
    signIn: {
      path: '/signin',
      fields: (user) => {
        addUser.run(`usr_${user}`, user, `${user}@example.test`, userNamed(user).destination);
        return { userId: `usr_${user}` };
      },
      csrfFrom: '/',
    },
    actions: [
      { name: 'confirm_phone' },
      { name: 'change_payout', fields: (n) => ({ accountNumber: String(40_000_000 + n) }) },
      // The number typed into "Change phone number" becomes the user's phone once verified; the
      // user confirms it's them on their current number first.
      {
        name: CHANGE_PHONE,
        requireRecentVerification: { scope: CHANGE_PHONE_STEP_UP, maxAge: 600 },
        enteredNumber: {
          numberOf: (user) => (phoneOf.get(`usr_${user}`) as { phone: string } | undefined)?.phone ?? null,
        },
      },
    ],
    // The Security page and the form that replaces the recovery codes (the demo's own handler).
    stepUp: [
      { path: '/security', scope: SEE_SECURITY, maxAge: 600 },
      {
        path: '/security/recovery-codes',
        method: 'POST',
        scope: NEW_RECOVERY_CODES,
        maxAge: 300,
        // The demo's own CSRF token, from the sign-out form on every page.
        fields: async (_n, agent) => {
          const home = await agent.request('/');
          const token = /action="\/signout"><input type="hidden" name="_csrf" value="([^"]*)"/.exec(home.body)?.[1];
          if (token === undefined) throw new Error('no sign-out form with a _csrf field on /');
          return { _csrf: token };
        },
        effects: (user) => (activityOf.get(`usr_${user}`, NEW_RECOVERY_CODES) as { n: number }).n,
      },
    ],
    clock,
    probe: (sessionId) => (activity.get(sessionId) as { n: number }).n,
    kit: demo.kit,
    sweep: { run: () => demo.kit.runSweep({ owner: 'audit-sweep' }), clock },
    logs: () => logs,
    proxy: { headers: { 'x-forwarded-proto': 'https' } },
    sessionCookie: 'demo.sid',
  };
  return {
    options,
    async close() {
      await closeServer(server);
      await demo.close();
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
