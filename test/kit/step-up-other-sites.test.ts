/**
 * The step-up guard and requests another site starts, on SQLite and on PostgreSQL: a fresh grant
 * never lets another site's (or a sibling subdomain's) form run the handler, and links from another
 * site keep nothing, so they cannot fill the user's kept requests and lock out the user's own forms.
 */
import { expect, it } from 'vitest';
import type { Agent } from '../support/agent.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { LIVE_INTENTS_PER_USER } from '../../middleware/step-up/intent-limit.ts';
import { confirmForm, useStepUpApp } from '../support/step-up.ts';

describeEachAppStore('step-up and other sites', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions);
  const { ran } = suite;
  const payeesOf = (user: string) => ran.filter((r) => r.route === 'payee' && r.user === user);

  async function keptRows(userRef: string): Promise<number> {
    const [row] = await suite.app.query<{ n: number | string }>(
      'SELECT count(*) AS n FROM verify_kit_intents WHERE user_ref = $1',
      [userRef],
    );
    return Number(row!.n);
  }

  /** The user's own form, sent from this site without a grant, is kept and asked to confirm. */
  async function expectOwnFormKept(user: Agent, account: string): Promise<void> {
    const sameOrigin = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const form = await user.postForm(`/accounts/${account}/payee`, { iban: 'OWN' }, sameOrigin);
    expect(form.status).toBe(200);
    expect(form.body).toContain('Confirm it’s you');
  }

  /** Verifies from a "Confirm it's you" page and lands; returns the landing's Location. */
  async function verifyFrom(user: Agent, html: string): Promise<string | null> {
    const form = confirmForm(html);
    const started = await user.start(form.action, { intent: form.intent });
    return (await user.request(await user.verifyOnHostedPage(started))).location;
  }

  it('with a fresh grant, another site’s form, a sibling subdomain’s and one nothing vouches for are refused: the handler never runs', async () => {
    const user = await suite.app.agent().signIn('granted-cross');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const kept = await user.postForm('/accounts/acct-g/payee', { iban: 'OWN-1' }, sameSite);
    expect(await verifyFrom(user, kept.body)).toMatch(/^\/verify\/step-up\?intent=/);
    // The grant is fresh: the site's own form goes straight through.
    expect((await user.postForm('/accounts/acct-g/payee', { iban: 'OWN-2' }, sameSite)).body).toContain('payee saved');
    const forged: [string, Record<string, string>][] = [
      ['another site', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }],
      ['a sibling subdomain', { origin: 'https://evil.app.example', 'sec-fetch-site': 'same-site' }],
      ['a sandboxed frame', { origin: 'null' }],
      ['a browser without fetch metadata or Origin', {}],
    ];
    for (const [from, headers] of forged) {
      const answer = await user.postForm('/accounts/acct-g/payee', { iban: 'ATTACKER' }, headers);
      expect(answer.status, from).toBe(403);
      expect(answer.body, from).not.toContain('payee saved');
    }
    expect(payeesOf('granted-cross').map((r) => r.fields.iban)).toEqual(['OWN-2']);
  });

  it('with a fresh grant, another site’s script posting a form body (no preflight) is refused as its form is: the handler never runs', async () => {
    const user = await suite.app.agent().signIn('granted-script');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const kept = await user.postForm('/accounts/acct-s/payee', { iban: 'OWN-1' }, sameSite);
    expect(await verifyFrom(user, kept.body)).toMatch(/^\/verify\/step-up\?intent=/);
    // The site's own script, with the grant fresh, goes straight through.
    const own = await user.postForm('/accounts/acct-s/payee', { iban: 'OWN-2' }, { ...sameSite, accept: '*/*' });
    expect(own.body).toContain('payee saved');
    // `fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', body: form })` from a
    // sandboxed frame, in a browser without fetch metadata: a simple request, no preflight, and its
    // Accept is the script's to choose.
    const forged: [string, Record<string, string>][] = [
      ['Origin: null, Accept: */*', { origin: 'null', accept: '*/*' }],
      ['Origin: null, Accept: application/json', { origin: 'null', accept: 'application/json' }],
      ['no Origin, Accept: */*', { accept: '*/*' }],
    ];
    for (const [from, headers] of forged) {
      const answer = await user.postForm('/accounts/acct-s/payee', { iban: 'ATTACKER' }, headers);
      expect(answer.status, from).toBe(403);
      expect(answer.body, from).not.toContain('payee saved');
    }
    expect(payeesOf('granted-script').map((r) => r.fields.iban)).toEqual(['OWN-2']);
  });

  it('links from another site keep nothing: they never fill the user’s kept requests, and the user’s own form is still kept', async () => {
    const user = await suite.app.agent().signIn('linked-from-elsewhere');
    const texts = (await suite.app.emulator.control.outbox()).length;
    const fromElsewhere = {
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-dest': 'document',
    };
    for (let n = 0; n < LIVE_INTENTS_PER_USER + 1; n++) {
      const answer = await user.request(`/security?utm=${n}`, { headers: fromElsewhere });
      expect(answer.status).toBe(200);
      expect(answer.body).not.toContain('codes for');
      expect(answer.body).not.toContain('name="intent"');
    }
    // Another site's script asking for JSON is refused, never answered 2xx, and keeps nothing either.
    const scripted = await user.request('/export', {
      headers: { accept: 'application/json', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(scripted.status).toBe(403);
    expect(await keptRows('user-linked-from-elsewhere')).toBe(0);
    expect((await suite.app.emulator.control.outbox()).length).toBe(texts);
    // The page links to itself; opened from this site, the guard asks as usual.
    const linked = await user.request('/security?utm=3', { headers: fromElsewhere });
    // An empty href: the page's own address, query included.
    const href = /<a href="([^"]*)">Continue<\/a>/.exec(linked.body)?.[1];
    expect(href).toBe('');
    const own = await user.request('/security?utm=3', { headers: { 'sec-fetch-site': 'same-origin' } });
    expect(own.body).toContain('Confirm it’s you');
    expect(own.body).toContain('name="intent"');
    // The user's own form is kept, not refused for want of room.
    await expectOwnFormKept(user, 'acct-l');
    expect(await keptRows('user-linked-from-elsewhere')).toBe(2);
  });

  it('a sibling subdomain’s images and scripts (no Origin) keep nothing either: refused, never 2xx, and the user’s own form is still kept', async () => {
    const user = await suite.app.agent().signIn('embedded-from-sibling');
    const texts = (await suite.app.emulator.control.outbox()).length;
    // `<img src>` and `<script src>` on a sibling subdomain: the user's cookies go with them, no Origin does.
    const embedded = [
      {
        accept: 'image/avif,image/webp,*/*',
        'sec-fetch-site': 'same-site',
        'sec-fetch-mode': 'no-cors',
        'sec-fetch-dest': 'image',
      },
      { accept: '*/*', 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' },
    ];
    for (let n = 0; n < LIVE_INTENTS_PER_USER + 1; n++) {
      const answer = await user.request(`/security?img=${n}`, { headers: embedded[n % 2]! });
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.body).not.toContain('codes for');
    }
    expect(await keptRows('user-embedded-from-sibling')).toBe(0);
    expect((await suite.app.emulator.control.outbox()).length).toBe(texts);
    await expectOwnFormKept(user, 'acct-e');
  });
});
