/**
 * The step-up guard's decisions as an operator counts them: `verify_kit.step_up` by event
 * (required, granted, consumed, denied, expired), scope and route (the route's pattern, never the
 * requested path), on SQLite and on PostgreSQL. A refusal is `expired` only when the user holds a
 * grant for the same resource that is too old; a grant for another resource leaves it `required`.
 */
import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricName } from '../../middleware/telemetry.ts';
import type { Agent } from '../support/agent.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp } from '../support/app.ts';
import { confirmForm, SCOPES, TEN_MINUTES, useStepUpApp } from '../support/step-up.ts';

class CollectingReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const reader = new CollectingReader();
beforeAll(() => {
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
});
afterAll(() => {
  metrics.disable();
});

/** The counter's value for each `event scope route`, as collected now. */
async function stepUpCounts(): Promise<Record<string, number>> {
  const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
  const metric = resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((m) => m.descriptor.name === MetricName.StepUp);
  const points = (metric?.dataPoints ?? []) as { attributes: Record<string, unknown>; value: number }[];
  return Object.fromEntries(
    points.map((p) => [
      `${String(p.attributes['verify_kit.step_up'])} ${String(p.attributes['verify_kit.scope'])} ${String(p.attributes['verify_kit.route'])}`,
      p.value,
    ]),
  );
}

/** What was counted since `before`: the keys whose value grew, and by how much. */
function since(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after)
      .map(([key, value]) => [key, value - (before[key] ?? 0)] as const)
      .filter(([, grew]) => grew > 0),
  );
}

describeEachAppStore('verify_kit.step_up', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions);

  async function verifyFrom(user: Agent, html: string) {
    const form = confirmForm(html);
    const started = await user.start(form.action, { intent: form.intent });
    return user.request(await user.verifyOnHostedPage(started));
  }

  it('counts each decision once, by event, scope and route pattern', async () => {
    const alice = await suite.app.agent().signIn('alice');
    const same = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };

    let before = await stepUpCounts();
    const page = await alice.request('/security?tab=codes');
    expect(since(before, await stepUpCounts())).toEqual({ 'required security /security': 1 });

    await verifyFrom(alice, page.body);
    before = await stepUpCounts();
    expect((await alice.request('/security?tab=codes')).status).toBe(200);
    expect(since(before, await stepUpCounts())).toEqual({ 'granted security /security': 1 });

    before = await stepUpCounts();
    const kept = await alice.postForm('/accounts/acct-9/payee', { iban: 'FR76' }, same);
    expect(since(before, await stepUpCounts())).toEqual({ 'required payout /accounts/:account/payee': 1 });

    const landing = await verifyFrom(alice, kept.body);
    const confirm = await alice.request(landing.location!);
    const intentId = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirm.body)![1]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(confirm.body)![1]!;
    const send = () => alice.postForm('/accounts/acct-9/payee', { _csrf: csrf, _verify_kit_intent: intentId }, same);
    before = await stepUpCounts();
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(409);
    expect(since(before, await stepUpCounts())).toEqual({
      'consumed payout /accounts/:account/payee': 1,
      'denied payout /accounts/:account/payee': 1,
    });

    before = await stepUpCounts();
    const late = await suite.app.clock.shifted((TEN_MINUTES + 5) * 1000, () => alice.request('/security'));
    expect(late.body).toContain('Confirm it’s you');
    expect(since(before, await stepUpCounts())).toEqual({ 'expired security /security': 1 });
  });

  it('counts a refusal as expired only under a too-old grant for the same resource, as required under a grant for another', async () => {
    const user = await suite.app.agent().signIn('counted-resources');
    const same = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    await verifyFrom(user, (await user.postForm('/accounts/acct-1/payee', { iban: 'ONE' }, same)).body);

    let before = await stepUpCounts();
    const other = await user.postForm('/accounts/acct-2/payee', { iban: 'TWO' }, same);
    expect(other.body).toContain('Confirm it’s you');
    expect(since(before, await stepUpCounts())).toEqual({ 'required payout /accounts/:account/payee': 1 });

    // Past the payout guard's 300 s, the grant for acct-1 is too old for acct-1 only.
    before = await stepUpCounts();
    await suite.app.clock.shifted(301_000, async () => {
      expect((await user.postForm('/accounts/acct-1/payee', { iban: 'ONE' }, same)).body).toContain('Confirm it’s you');
      expect((await user.postForm('/accounts/acct-3/payee', { iban: 'THREE' }, same)).body).toContain(
        'Confirm it’s you',
      );
    });
    expect(since(before, await stepUpCounts())).toEqual({
      'expired payout /accounts/:account/payee': 1,
      'required payout /accounts/:account/payee': 1,
    });
  });
});

describe('verify_kit.step_up under a mount', () => {
  it('a guard mounted under a path with a parameter (app.use, or a router mounted there) counts no account id: the mount is `*`', async () => {
    const app = await startTestApp({
      kit: { scopes: [...SCOPES] },
      ownRoutes: (routes, kit) => {
        const guard = () => kit.requireRecentVerification({ scope: 'security', maxAge: TEN_MINUTES });
        routes.use('/vault/:account', guard(), (_req, res) => void res.send('vault'));
        const accounts = express.Router();
        accounts.get('/statement', guard(), (_req, res) => void res.send('statement'));
        routes.use('/acc/:account', accounts);
      },
    });
    try {
      const user = await app.agent().signIn('mounted-telemetry');
      const before = await stepUpCounts();
      for (const path of ['/vault/acct-7/x', '/acc/acct-8/statement']) {
        expect((await user.request(path)).body).toContain('Confirm it’s you');
      }
      expect(since(before, await stepUpCounts())).toEqual({
        'required security *': 1,
        'required security */statement': 1,
      });
    } finally {
      await app.close();
    }
  });

  it('the guard logs each decision with the route pattern the counter uses, never the requested path and its account id', async () => {
    const app = await startTestApp({
      kit: { scopes: [...SCOPES] },
      ownRoutes: (routes, kit) => {
        const guard = () => kit.requireRecentVerification({ scope: 'security', maxAge: TEN_MINUTES });
        routes.get('/own/:account/keys', guard(), (_req, res) => void res.send('keys'));
        routes.use('/vault/:account', guard(), (_req, res) => void res.send('vault'));
      },
    });
    try {
      const user = await app.agent().signIn('logged-mount');
      for (const path of ['/own/acct-5/keys', '/vault/acct-6/x']) {
        expect((await user.request(path)).body).toContain('Confirm it’s you');
      }
      expect(app.logs.join('\n')).not.toMatch(/acct-5|acct-6/);
      const lines = app.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
      const decisions = lines.filter((line) => line.route === 'step-up');
      expect(decisions.map((line) => [line.msg, line.routePattern])).toEqual([
        ['step-up required', '/own/:account/keys'],
        ['step-up required', '*'],
      ]);
    } finally {
      await app.close();
    }
  });
});
