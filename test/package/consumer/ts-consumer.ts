// A strict TypeScript integrator (module node16) type-checking against the shipped declarations only.
// The @ts-expect-error lines prove the declarations are real types, not `any`: were they `any`,
// each directive would be unused, and that is an error too.
import Database from 'better-sqlite3';
import type { RequestHandler } from 'express';
import {
  createVerificationKit,
  KitErrorCode,
  type ActionDefinition,
  type GrantSummary,
  type RoutesOptions,
  type VerificationKit,
} from 'hosted-sms-verify-kit';
import { createSqliteStore } from 'hosted-sms-verify-kit/sqlite';
import { startEmulator, type EmulatorControl, type RunningEmulator } from 'hosted-sms-verify-kit/testing';

const db = new Database(':memory:');

const confirmPhone: ActionDefinition<Database.Database> = {
  name: 'confirm_phone',
  operationSensitivity: 'normal',
  successPath: '/profile',
  fulfil: (tx, attempt) => {
    tx.prepare('UPDATE users SET phone_verified = 1 WHERE id = ?').run(attempt.userRef);
  },
};

export const kit: VerificationKit<Database.Database> = createVerificationKit({
  baseUrl: 'https://verify.example.com',
  clientId: 'shop',
  clientSecret: process.env.VERIFY_CLIENT_SECRET ?? '',
  returnUrl: 'https://shop.example/verify/return',
  store: createSqliteStore({ database: db }),
  actions: [confirmPhone],
  resolveUser: () => ({ userRef: 'user-1', destination: '+15550100001' }),
});

/** Grouped options: a route is a path or false; the sweep runs through the kit. */
export const landingOnly = createVerificationKit({
  baseUrl: 'https://verify.example.com',
  clientId: 'shop',
  clientSecret: process.env.VERIFY_CLIENT_SECRET ?? '',
  returnUrl: 'https://shop.example/verify/return',
  store: createSqliteStore({ database: db }),
  actions: [confirmPhone],
  resolveUser: () => null,
  routes: { start: false },
  client: { timeouts: { headersMs: 5000 } },
  sweep: { firstCheckAfterMs: 60_000 },
});
export const swept: Promise<number> = landingOnly.runSweep({ batchSize: 10 }).then((report) => report.fulfilled);
// @ts-expect-error routes are a path or false, not true
export const wrongRoute: RoutesOptions = { start: true };

export const wrongSensitivity: ActionDefinition = {
  name: 'x',
  // @ts-expect-error operationSensitivity is 'normal' | 'sensitive'
  operationSensitivity: 'critical',
  successPath: '/',
  fulfil: () => {},
};

export const code: string = KitErrorCode.RateLimited;

/** Step-up: a scope declared like an action, a guard on the integrator's own route, and the grants. */
export const guarded = createVerificationKit({
  baseUrl: 'https://verify.example.com',
  clientId: 'shop',
  clientSecret: process.env.VERIFY_CLIENT_SECRET ?? '',
  returnUrl: 'https://shop.example/verify/return',
  store: createSqliteStore({ database: db }),
  actions: [confirmPhone],
  scopes: [{ name: 'security', operationSensitivity: 'sensitive', label: { en: 'see your codes' } }],
  resolveUser: () => null,
});
export const guard: RequestHandler = guarded.requireRecentVerification({
  scope: 'security',
  maxAge: 600,
  bindTo: (req) => String(req.params.account),
});
// @ts-expect-error maxAge is a number of seconds
guarded.requireRecentVerification({ scope: 'security', maxAge: '10m' });
export const grants: Promise<GrantSummary[]> = guarded.grants.list({ userRef: 'user-1' });

export async function withEmulator(): Promise<string> {
  const emulator: RunningEmulator = await startEmulator({
    port: 0,
    clients: [{ clientId: 'shop', secret: 'shop-secret-0123456789', returnUrl: 'http://localhost:3000/verify/return' }],
    log: () => {},
  });
  const control: EmulatorControl = emulator.control;
  await control.completeSession('session-id', 'failed', 'otp_locked');
  // @ts-expect-error a failed outcome needs a reason
  await control.completeSession('session-id', 'failed');
  const sms: string = await control.latestCode({ destination: '+15550100001' });
  await emulator.close();
  return sms;
}
