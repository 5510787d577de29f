/**
 * The tokens the audit's users hold (their start tokens, the step-up intents the app hands them,
 * their attempts' session ids and states) are masked in the report, as its numbers are: the
 * evidence quotes URLs (a start sent as a GET, a landing, a Location) that carry them.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// The command as the bin runs it: from the build.
import { command } from '../../dist/testing/audit/command.js';
import { TokenMask } from '../../testing/audit/token-mask.ts';

const config = fileURLToPath(new URL('./sample.config.ts', import.meta.url));

describe('the tokens the audit holds, in its report', () => {
  it('csrf.methods, forged.*, step-up.redirect: no _csrf, session_id, state or intent value in the report but masked', async () => {
    let out = '';
    const code = await command.run(
      [
        '--config',
        config,
        '--only',
        'csrf.methods,forged.missing-state,forged.foreign-session,step-up.redirect',
        '--json',
      ],
      {},
      (text) => (out += text),
      () => {},
    );
    expect(code).toBe(0);
    const evidence = (JSON.parse(out) as { checks: { evidence: string[] }[] }).checks.flatMap((c) => c.evidence);
    const text = evidence.join('\n');
    expect(text).toContain('_csrf=[a start token ending ');
    expect(text).toContain('session_id=[a session id ending ');
    expect(text).toContain('state=[a state ending ');
    expect(text).toContain('intent=[a step-up intent ending ');
    // Every value of those parameters is masked, but a forged one the audit made up (not a state at all).
    for (const [, name, value] of text.matchAll(/[?&](_csrf|session_id|state|intent)=([^&\s)"]*)/g)) {
      expect(value === '' || value === 'x' || value!.startsWith('[a'), `${name}=${value}`).toBe(true);
    }
  }, 60_000);

  it('a token cut short or lengthened, URL-encoded or form-encoded, is masked; a short value is no token', () => {
    const mask = new TokenMask('http://app.test');
    mask.add('start token', 'ab+c/d=ef0123456789ghijkl');
    mask.add('state', 'short');
    expect(mask.mask('?_csrf=ab+c/d=ef0123456789ghijk&x=1')).toBe('?_csrf=[a start token ending kl]&x=1');
    expect(mask.mask('?_csrf=ab%2Bc%2Fd%3Def0123456789ghijklx')).toBe('?_csrf=[a start token ending kl]');
    expect(mask.mask('a short state')).toBe('a short state');
  });
});
