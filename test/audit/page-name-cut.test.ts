/**
 * The audit's evidence names the page an answer showed by its title, shortened: cut in the middle of
 * a word, the title of a page that shows the client secret (the leak the audit looks for) would keep
 * the secret's first characters, too few for the scrub to recognise as the secret. A title is cut
 * only between words, so a secret in it is quoted whole (and scrubbed) or not at all.
 */
import { describe, expect, it } from 'vitest';
import type { Answer } from '../../testing/audit/agent.ts';
import { describeAnswer } from '../../testing/audit/check.ts';
import { scrubSecret, secretForms } from '../../testing/audit/secret.ts';

const SECRET = 'Zq9XkLmP2vR7tY4wQ8sN';

function answerTitled(title: string): Answer {
  return {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    setCookies: [],
    body: `<!doctype html><title>${title}</title><h1>Settings</h1>`,
    location: null,
    url: 'http://localhost:3000/settings',
  };
}

describe('a page title in the evidence', () => {
  const forms = secretForms('client-id', SECRET);
  const evidence = (title: string) => scrubSecret(forms, describeAnswer(answerTitled(title)));

  it.each([3, 5, 7])(
    'holding the secret where the cut falls (%i of its characters before it): none of it is quoted',
    (kept) => {
      // The secret starts `kept` characters before the 80th, after a space.
      const lead = `${'Settings of your account, and the key we use for the service:'.padEnd(79 - kept, '.')} `;
      const line = evidence(`${lead}${SECRET} (keep it safe)`);
      expect(line).not.toContain(SECRET.slice(0, kept));
      expect(line).toContain('Settings of your account');
    },
  );

  it('a short title is quoted whole, and one without a space to cut at is not quoted', () => {
    expect(evidence('Security')).toContain('(page "Security")');
    expect(evidence(`${SECRET}${'x'.repeat(100)}`)).not.toContain(SECRET.slice(0, 3));
  });
});
