/**
 * entered.refused-number fails an app whose destinationPolicy lets through a number the kit
 * refuses by default other than a premium-rate one: a UK 070 personal number (its owner takes a
 * share of what the caller pays, the pumping payout), a shared-cost one, a number of no country.
 * The kit's defaults refuse each, and the same check passes them.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type CustomFlaw, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

async function refusedNumberFailures(destinationPolicy?: CustomFlaw['destinationPolicy']) {
  const app = await startSampleApp(destinationPolicy === undefined ? {} : { destinationPolicy });
  apps.push(app);
  const report = await auditIntegration({ ...app.auditOptions, only: ['entered.refused-number'] });
  return { failed: failedIds(report), table: formatAuditTable(report) };
}

describe('entered.refused-number', () => {
  for (const [name, policy] of [
    ['a UK 070 personal number', { allowTypes: ['PERSONAL_NUMBER'] }],
    ['a shared-cost number', { allowTypes: ['SHARED_COST'] }],
    ['a number of no country', { allowCountries: ['GB', 'US', 'FR', 'ZZ'] }],
  ] as const) {
    it(`fails an app whose destinationPolicy lets ${name} through`, async () => {
      const { failed, table } = await refusedNumberFailures(policy);
      expect(failed, table).toEqual(['entered.refused-number']);
    });
  }

  it('(control: the kit’s defaults pass it)', async () => {
    const { failed, table } = await refusedNumberFailures();
    expect(failed, table).toEqual([]);
  });
});
