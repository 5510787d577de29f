/**
 * entered.number-masked finds a typed number whose digits are percent-encoded (`/call/%30%37…`):
 * a link or URL a page shows, the address bar, a server's log decode it at a glance, so it is the
 * number in full however it is escaped. A page showing it masked, or other escapes, passes.
 */
import { describe, expect, it } from 'vitest';
import { typedNumberPages } from './typed-number-page.ts';

const audited = typedNumberPages();

/** `text` with each digit percent-encoded. */
const escaped = (text: string) => text.replace(/\d/g, (d) => `%3${d}`);

/** The national digits of a typed +44 number: "07400123456". */
const national = (phone: string) => `0${phone.replace(/\D/g, '').slice(2)}`;

describe('entered.number-masked and a typed number percent-encoded', () => {
  it('fails a success page showing a link to /call/ with the number percent-encoded as its text', async () => {
    const { check, table } = await audited((phone) => {
      const link = `/call/${escaped(national(phone))}`;
      return { html: `<!doctype html><title>Done</title><p>Call us from <a href="${link}">${link}</a>.</p>` };
    });
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response body/);
  }, 120_000);

  it('fails a redirect whose URL carries the number percent-encoded, + and all (the address bar shows it)', async () => {
    const { check, table } = await audited((phone) => ({
      location: `/done?shown=1&to=%2B${escaped(phone.replace(/\D/g, ''))}`,
    }));
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response header location/);
  }, 120_000);

  it('passes a success page showing the number masked in a percent-encoded link', async () => {
    const { check, table } = await audited((phone) => {
      const link = `/call/%E2%80%A2%E2%80%A2%20${escaped(phone.slice(-2))}`;
      return { html: `<!doctype html><title>Done</title><p><a href="${link}">${link}</a></p>` };
    });
    expect(check?.status, table).toBe('pass');
  }, 120_000);
});
