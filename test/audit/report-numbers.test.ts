/**
 * The report never quotes a phone number the audit typed in full: csrf.methods' evidence named each
 * start it sent as a GET by its whole URL, the start form's fields in its query, so the JSON report
 * of every app with a typed-number action carried the number typed (URL-encoded) on a sound run.
 * Every number the run types is masked in what the audit reports, in any spelling.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditJson, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { NumberMask } from '../../testing/audit/number-mask.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
});

/** Every UK mobile number of the audit's range (+44 7400 1xxxxx) in `text`, in any spelling. */
function typedNumbersIn(text: string): string[] {
  const separator = '(?:[\\s.()/+-]|%20|%2B|&nbsp;)*';
  const digits = '7400'.split('').concat(['1', '\\d', '\\d', '\\d', '\\d', '\\d']);
  return text.match(new RegExp(digits.join(separator), 'gi')) ?? [];
}

describe('the report and a typed number', () => {
  it('csrf.methods on a sound app with a typed-number action passes, its report quoting no typed number in full', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['csrf.methods'] });
    const json = formatAuditJson(report);
    expect(report.ok, formatAuditTable(report)).toBe(true);
    expect(json).toContain('change_phone');
    expect(typedNumbersIn(json)).toEqual([]);
    // Said, masked: the evidence still names the start it sent.
    expect(json).toMatch(/phone=%2B\[a number ending \d\d\]/);
  }, 120_000);

  it('a number is masked in any spelling, and other digits are left as they are', () => {
    const mask = new NumberMask();
    mask.add('+44 7400 123456');
    for (const spelt of ['+44 7400 123456', '%2B44+7400+123456', '07400 123456', '+44&nbsp;7400&nbsp;123456']) {
      expect(mask.mask(`sent to ${spelt}.`)).toBe(
        `sent to ${spelt.startsWith('%2B') ? '%2B' : spelt.startsWith('+') ? '+' : ''}[a number ending 56].`,
      );
    }
    expect(mask.mask('at 1732963200000, 7400 123457 and 12 ms')).toBe('at 1732963200000, 7400 123457 and 12 ms');
  });
});

describe('the report and the premium-rate numbers typed', () => {
  it('entered.refused-number on a sound app passes, naming each number it typed without the number in full', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['entered.refused-number'] });
    const json = formatAuditJson(report);
    expect(report.ok, formatAuditTable(report)).toBe(true);
    expect(json).not.toMatch(/9098\s?790000/);
    expect(json).not.toMatch(/900\s?555\s?0123/);
    expect(json).toContain('the UK premium-rate number (09098 …) answered 4');
  }, 120_000);
});
