/**
 * Without a probe the audit counts an attempt's effect through `kit.attempts.get`: 1 once the kit
 * marked it fulfilled, none for an attempt not marked or not known. A read relayed as JSON (the kit
 * of an app in another process, reached over HTTP) says an unknown attempt as null, never as
 * undefined: null is no attempt, not an effect.
 */
import { afterAll, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { fulfilmentsOf } from '../../testing/audit/hooks.ts';
import { startIntegratorApp, type IntegratorApp } from './integrator-app.ts';

const apps: IntegratorApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

it('passes a sound app whose kit is read through a JSON relay, an unknown attempt read as null', async () => {
  const app = await startIntegratorApp();
  apps.push(app);
  const { kit, probe: _probe, ...options } = app.auditOptions;
  const get = kit?.attempts?.get;
  if (get === undefined) throw new Error('the integrator app gives its kit');
  const relayed = {
    serviceUrl: kit?.serviceUrl,
    attempts: {
      // What a JSON answer holds: undefined has no JSON, the relay sends null.
      get: async (sessionId: string) => JSON.parse(JSON.stringify((await get(sessionId)) ?? null)),
    },
  };
  expect(await relayed.attempts.get('no-such-session')).toBeNull();
  const report = await auditIntegration({
    ...options,
    kit: relayed,
    only: ['forged.unknown-session', 'replay.after-success', 'stale-intent'],
  });
  const table = formatAuditTable(report);
  expect(report.counting, table).toBe('read-api');
  expect(report.checks.map((check) => check.id).sort(), table).toEqual([
    'forged.unknown-session',
    'replay.after-success',
    'stale-intent',
  ]);
  expect(failedIds(report), table).toEqual([]);
}, 60_000);

it('counts a read as the kit says it: a time marked 1, null or no attempt 0, anything else a sentence naming the read', () => {
  const what = "kit.attempts.get('s')";
  expect(fulfilmentsOf(what, { fulfilledAt: 1_700_000_000_000 })).toBe(1);
  for (const none of [undefined, null, { fulfilledAt: null }]) expect(fulfilmentsOf(what, none)).toBe(0);
  for (const odd of [{}, { fulfilledAt: '2026-11-30' }, 'fulfilled', 1])
    expect(() => fulfilmentsOf(what, odd)).toThrow(
      /^kit\.attempts\.get\('s'\) answered .*, not an attempt \(its fulfilledAt a time, or null\)$/,
    );
});
