/**
 * The auto-submit page's CSP allows forms to the verifyUrl's origin only. The start remembers the
 * last origin to skip a URL parse; these prove the remembered origin is never applied to a URL on
 * another origin, and a URL the parser would refuse is still refused.
 */
import { describe, expect, it } from 'vitest';
import { originOfVerifyUrl } from '../../middleware/routes/start.ts';

describe('the origin of the service verifyUrl', () => {
  it('is the URL origin, also after another origin was seen', () => {
    const originOf = originOfVerifyUrl();
    expect(originOf('https://verify.example.com/v/1?x=1')).toBe('https://verify.example.com');
    expect(originOf('https://verify.example.com/v/2')).toBe('https://verify.example.com');
    // Starts with the remembered origin's characters, but the host is another one.
    expect(originOf('https://verify.example.com.evil.test/v/3')).toBe('https://verify.example.com.evil.test');
    expect(originOf('https://verify.example.com:8443/v/4')).toBe('https://verify.example.com:8443');
    expect(originOf('http://127.0.0.1:4010/v/5')).toBe('http://127.0.0.1:4010');
  });

  it('refuses a verifyUrl that is not http(s) or not a URL, whatever came before', () => {
    const originOf = originOfVerifyUrl();
    expect(originOf('https://verify.example.com/v/1')).toBe('https://verify.example.com');
    expect(() => originOf('javascript:alert(1)')).toThrow(/not http\(s\)/);
    expect(() => originOf('not a url')).toThrow(/unusable verifyUrl/);
  });

  it('refuses a verifyUrl carrying credentials: the page would show them and post the handoff with them', () => {
    const originOf = originOfVerifyUrl();
    expect(originOf('https://verify.example.com/v/1')).toBe('https://verify.example.com');
    expect(() => originOf('https://user:pass@verify.example.com/v/2')).toThrow(/credentials/);
    // A userinfo spelled as the service's host, hiding another host.
    expect(() => originOf('https://verify.example.com@evil.test/v/3')).toThrow(/credentials/);
    expect(() => originOf('https://:pass@verify.example.com/v/4')).toThrow(/credentials/);
  });

  it('refuses a plain-http verifyUrl outside loopback (the handoff would cross the network in clear), as baseUrl is', () => {
    const originOf = originOfVerifyUrl();
    expect(() => originOf('http://verify.example.com/v/1')).toThrow(/https/);
    expect(originOf('https://verify.example.com/v/1')).toBe('https://verify.example.com');
    // Remembered as https: the same host over http is still refused.
    expect(() => originOf('http://verify.example.com/v/2')).toThrow(/https/);
    expect(() => originOf('http://127.0.0.2.example/v/3')).toThrow(/https/);
    for (const loopback of [
      'http://localhost:4010',
      'http://verify.localhost:4010',
      'http://127.0.0.1',
      'http://[::1]:4010',
    ]) {
      expect(originOf(`${loopback}/v/4`)).toBe(loopback);
    }
  });
});
