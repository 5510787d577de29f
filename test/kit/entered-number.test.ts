/**
 * An action that texts the number the user typed (`destination: 'entered'`), on SQLite and
 * PostgreSQL: read with libphonenumber-js and `defaultCountry` (E.164 stored, texted and counted),
 * refused with the number form back (422) when it cannot be a number, policed before any text
 * (every destination, the stored one included), limited per number and per distinct numbers a
 * user tried, shown masked, kept server-side across a restart, and never swapped before fulfil.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createVerificationKit,
  KitErrorCode,
  type ActionDefinition,
  type OutcomeEvent,
  type VerifiedAttempt,
} from '../../middleware/index.ts';
import { deriveServiceRefKey, destinationBoundRef } from '../../middleware/routes/service-user-ref.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { newSeen } from '../support/seen.ts';
import { USERS } from '../support/users.ts';
import { waitFor } from '../support/wait-for.ts';
import { addPhoneAction } from '../support/actions.ts';
import { demoKitMessages } from '../../demo-app/i18n.ts';

const FR_MOBILE = '+33612345678';
const DE_MOBILE = '+4915123456780';
const GB_MOBILE = '+447400123456';

/** Premium-rate (+1 900): refused by the default policy. */
const PREMIUM = '+19005550123';
/** The kit's text for a refused stored number: no number field on its page, so it asks for none. */
const STORED_REFUSED =
  'We cannot send a code to the phone number on your account. Change the number in your account, or contact support.';
/** What a refusal page must not say: the rule, or a request for a number it cannot take. */
const TEACHES_OR_ASKS = /premium|country|pays|type|polic|allowed|Enter another|Saisissez un autre|name="phone"/i;
const mainOf = (html: string) => /<main[^>]*>([\s\S]*)<\/main>/.exec(html)?.[1] ?? html;

const fulfilled: VerifiedAttempt[] = [];
const events: OutcomeEvent[] = [];

const addPhone = addPhoneAction((_tx, attempt) => void fulfilled.push(attempt));
const setNote: ActionDefinition<unknown> = {
  name: 'set_note',
  operationSensitivity: 'normal',
  successPath: '/done/note',
  fulfil: (_tx, attempt) => void fulfilled.push(attempt),
};

/** Texts the user's stored number and proves it (the service userRef is bound to that number). */
const confirmPhone: ActionDefinition<unknown> = {
  name: 'confirm_phone',
  operationSensitivity: 'normal',
  successPath: '/done/confirm',
  proves: 'destination',
  fulfil: (_tx, attempt) => void fulfilled.push(attempt),
};

const sms = async (app: TestApp) => (await app.emulator.control.outbox()).map((m) => m.to);

describeEachAppStore('typed numbers', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [addPhone, setNote, confirmPhone],
        // The user's language picks the country a national number belongs to.
        defaultCountry: (req) => (req.headers['accept-language']?.startsWith('fr') ? 'FR' : 'GB'),
        destinationPolicy: { refuseCountries: ['JM'] },
        limits: {
          ...GENEROUS_START_LIMITS,
          perDestination: { points: 3, durationSeconds: 600 },
          perUserNumbers: { points: 3, durationSeconds: 86_400 },
        },
        onOutcome: (event) => void events.push(event),
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });
  afterEach(() => {
    delete USERS.pat;
  });

  it('texts a national number read with the default country as E.164, shows it masked, and fulfil receives it', async () => {
    const seen = newSeen();
    const user = await app.agent(seen).signIn('alice');
    const fr = { 'accept-language': 'fr-FR' };
    const answer = await user.postStart({ _csrf: user.csrf, action: 'add_phone', phone: '06 12 34 56 78' }, fr);
    expect(answer.status).toBe(200);
    const attempt = await app.latestAttempt();
    expect(attempt.destination).toBe(FR_MOBILE);
    expect((await app.emulator.control.outbox()).find((m) => m.sessionId === attempt.sessionId)?.to).toBe(FR_MOBILE);
    // The page says where the code goes, masked: never the number itself.
    expect(answer.body).toContain('The code goes to the number ending ••\u00a078.');
    expect(answer.body).not.toMatch(/612345|12 34 56/);
    await app.emulator.control.complete(attempt.sessionId, { outcome: 'verified' });
    expect((await user.landFor(attempt.sessionId, attempt.state)).status).toBe(303);
    expect(fulfilled.find((a) => a.sessionId === attempt.sessionId)?.destination).toBe(FR_MOBILE);
    await waitFor(() => events.some((e) => e.sessionId === attempt.sessionId), 3000, 'the outcome event');
    expect(events.find((e) => e.sessionId === attempt.sessionId)?.destination).toBe('••\u00a078');
    // Neither a URL nor a log line carries the number.
    const everywhere = [...seen.urls, ...app.requestUrls, ...app.logs].join('\n');
    expect(everywhere).not.toContain('612345678');
    // In English the default country is GB: "07400 123456" is a UK mobile.
    const gb = await user.startWithNumber('add_phone', '07400 123456');
    expect((await app.attempt(gb.sessionId))?.destination).toBe(GB_MOBILE);
  });

  it('a number that cannot be a real number gets the number form back (422), translated, and sends and stores nothing', async () => {
    const user = await app.agent().signIn('bob');
    const before = { attempts: await app.attemptCount(), sms: (await sms(app)).length };
    for (const typed of ['12', 'call me', '+1 555 010 0001', '0'.repeat(200), '+33 6 12 34 56 78 ext. 9']) {
      const answer = await user.tryStartWithNumber('add_phone', typed);
      expect(answer.status, typed).toBe(422);
      expect(answer.body).toContain('This is not a phone number we can text.');
      expect(answer.body).toMatch(/<input id="verify-kit-number" name="phone" type="tel"/);
      expect(answer.body).toContain('<input type="hidden" name="action" value="add_phone">');
    }
    // What was typed comes back in its own field (escaped), so the user corrects it.
    const typedBack = await user.tryStartWithNumber('add_phone', '"><b>12');
    expect(typedBack.body).toContain('value="&quot;&gt;&lt;b&gt;12"');
    // Nothing in the request: the same form.
    expect((await user.tryStart('add_phone')).status).toBe(422);
    expect(await app.attemptCount()).toBe(before.attempts);
    expect((await sms(app)).length).toBe(before.sms);
  });

  it('a number with an extension or a subaddress after a ";" gets the number form back (422), and sends and stores nothing', async () => {
    const user = await app.agent().signIn('bob');
    const before = { attempts: await app.attemptCount(), sms: (await sms(app)).length };
    // libphonenumber-js drops an `ext` that follows an `isub`, and the subaddress itself: the
    // number read would be texted as if nothing followed it.
    for (const typed of ['+447400123456;isub=1;ext=2', '07400 123456;isub=9;ext=123', '+447400123456;isub=1']) {
      const answer = await user.tryStartWithNumber('add_phone', typed);
      expect(answer.status, typed).toBe(422);
      expect(answer.body).toContain('This is not a phone number we can text.');
    }
    expect(await app.attemptCount()).toBe(before.attempts);
    expect((await sms(app)).length).toBe(before.sms);
  });

  it('refuses what the destination policy refuses, before any text, without saying which rule; logged masked and counted by reason', async () => {
    const user = await app.agent().signIn('bob');
    const before = { attempts: await app.attemptCount(), sms: (await sms(app)).length };
    // Premium-rate (GB 09xx), shared-cost (FR 0810), a GB 070 personal number (redirected at the
    // caller's cost, a pumping payout), and a +1 number that is Jamaica's, not the US's.
    const refused = [
      ['09098 790000', 'type'],
      ['+33 810 12 34 56', 'type'],
      ['070 1234 5678', 'type'],
      ['+1 876 555 0123', 'country'],
    ] as const;
    for (const [typed] of refused) {
      const answer = await user.tryStartWithNumber('add_phone', typed);
      expect(answer.status, typed).toBe(422);
      expect(answer.body).toContain('We cannot send a code to this number. Enter another mobile number.');
      expect(answer.body).not.toMatch(/premium|shared|Jamaica|polic|allowed/i);
    }
    const lines = app.logs.filter((line) => line.includes('destination refused'));
    expect(lines.map((line) => (JSON.parse(line) as { reason: string }).reason).slice(-refused.length)).toEqual(
      refused.map(([, reason]) => reason),
    );
    expect(lines.join('\n')).not.toMatch(/9098790000|810123456|7012345678|8765550123/);
    expect(await app.attemptCount()).toBe(before.attempts);
    expect((await sms(app)).length).toBe(before.sms);
  });

  it('refuses numbers of no country (satellite phones, international networks) by default, stored or typed, with the one message; nothing is sent or stored', async () => {
    const before = { attempts: await app.attemptCount(), sms: (await sms(app)).length };
    const refusalsBefore = app.logs.filter((line) => line.includes('destination refused')).length;
    // Iridium (+881), Inmarsat (+870), international networks (+882, +883): numbers the library
    // places in no country; and a calling code no country has at all (+999).
    const stored = ['+881612345678', '+870773111632', '+882160000000', '+883510012345', '+99912345678'];
    for (const destination of stored) {
      USERS.pat = { userRef: 'user-pat', destination };
      const answer = await (await app.agent().signIn('pat')).tryStart('set_note');
      expect(answer.status, destination).toBe(422);
      expect(answer.body).toContain(STORED_REFUSED);
    }
    const typed = await (await app.agent().signIn('bob')).tryStartWithNumber('add_phone', '+881 6 1234 5678');
    expect(typed.status).toBe(422);
    expect(typed.body).toContain('We cannot send a code to this number. Enter another mobile number.');
    // The page's random tokens (its CSRF token, its nonce) may spell "ZZ" by chance: not the rule.
    const withoutTokens = typed.body.replace(/\b(nonce|value)="[\w+/=-]{16,}"/g, '$1=""');
    expect(withoutTokens).not.toMatch(/satellite|Iridium|ZZ|no country|polic|allowed/i);
    const lines = app.logs.filter((line) => line.includes('destination refused')).slice(refusalsBefore);
    expect(lines.map((line) => (JSON.parse(line) as { reason: string }).reason)).toEqual(
      new Array<string>(stored.length + 1).fill('no_country'),
    );
    expect(lines.join('\n')).not.toMatch(/612345678|773111632|160000000|510012345|12345678/);
    expect({ attempts: await app.attemptCount(), sms: (await sms(app)).length }).toEqual(before);
  });

  it("says how to fix a stored number in national form (resolveUser's '07400 123456'): give it in international form", async () => {
    const refusalsBefore = app.logs.filter((line) => line.includes('destination refused')).length;
    for (const destination of ['07400 123456', '+881612345678']) {
      USERS.pat = { userRef: 'user-pat', destination };
      const answer = await (await app.agent().signIn('pat')).tryStart('set_note');
      expect(answer.status, destination).toBe(422);
    }
    const [national, satellite] = app.logs.filter((line) => line.includes('destination refused')).slice(refusalsBefore);
    expect(national).toMatch(/resolveUser\(req\)\.destination has no '\+' and country code.*international form/);
    expect(national).toContain('"reason":"no_country"');
    // A number in international form of no country (a satellite phone) is refused without that advice.
    expect(satellite).toContain('"reason":"no_country"');
    expect(satellite).not.toMatch(/international form/);
  });

  it("polices the user's stored number too (premium-rate refused), while fictional test numbers still pass", async () => {
    USERS.pat = { userRef: 'user-pat', destination: '+19005550123' };
    const pat = await app.agent().signIn('pat');
    const before = (await sms(app)).length;
    const answer = await pat.tryStart('set_note');
    expect(answer.status).toBe(422);
    expect(answer.body).toContain(STORED_REFUSED);
    // Not the number form: set_note texts the stored number, so a number typed there would change nothing.
    expect(answer.body).not.toContain('name="phone"');
    expect((await sms(app)).length).toBe(before);
    const alice = await app.agent().signIn('alice');
    expect((await alice.tryStart('set_note')).status).toBe(200);
  });

  it('polices a stored number the metadata cannot read as the real number it starts with: a premium-rate or refused-country number with digits after it is not texted', async () => {
    const alice = await app.agent().signIn('alice');
    // +44 909 879 0000 is premium-rate, +1 876 555 0123 Jamaica (refused here): three digits more
    // make each unreadable as a whole, and the SMS pumping rules count them as those numbers.
    // +353 1520 123456 is premium-rate too, though its first digits are a Dublin landline.
    for (const destination of ['+449098790000999', '+18765550123999', '+35315201234560']) {
      USERS.pat = { userRef: 'user-pat', destination };
      const pat = await app.agent().signIn('pat');
      const before = (await sms(app)).length;
      const answer = await pat.tryStart('set_note');
      expect(answer.status, destination).toBe(422);
      expect(answer.body).toContain(STORED_REFUSED);
      expect((await sms(app)).length).toBe(before);
    }
    // A number with digits after a mobile of a country the policy takes is still texted as stored.
    USERS.pat = { userRef: 'user-pat', destination: `${GB_MOBILE}999` };
    const pat = await app.agent().signIn('pat');
    expect((await pat.tryStart('set_note')).status).toBe(200);
    expect(await sms(app)).toContain(`${GB_MOBILE}999`);
    expect((await alice.tryStart('set_note')).status).toBe(200);
  });

  it("texts a stored number exactly as the policy and the pumping rules read it: the service, the attempt and fulfil get that E.164, and the bound userRef is the number's own", async () => {
    const key = deriveServiceRefKey(app.secret);
    const bound = destinationBoundRef(key, { userRef: 'user-pat', destination: '+33612345679' });
    // Stored with the national 0 kept after +33, and with spaces: both read as +33 6 12 34 56 79.
    for (const destination of ['+330612345679', '+33 6 12 34 56 79']) {
      USERS.pat = { userRef: 'user-pat', destination };
      const pat = await app.agent().signIn('pat');
      const started = await pat.start('confirm_phone');
      const sent = (await app.emulator.control.outbox()).find((m) => m.sessionId === started.sessionId);
      expect(sent?.to, destination).toBe('+33612345679');
      const stored = await app.attempt(started.sessionId);
      expect(stored?.destination, destination).toBe('+33612345679');
      // One ref per user and number, whatever the spelling the app stored.
      expect(stored?.serviceUserRef, destination).toBe(bound);
      await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
      expect((await pat.landFor(started.sessionId, started.state)).status).toBe(303);
      expect(fulfilled.find((a) => a.sessionId === started.sessionId)?.destination, destination).toBe('+33612345679');
    }
  });

  it('counts the per-number budget on E.164: three spellings of one number share it', async () => {
    const user = await app.agent().signIn('carol');
    const fr = { 'accept-language': 'fr' };
    const spellings = ['06 98 76 54 32', '+33 6 98 76 54 32', '0033698765432'];
    for (const phone of spellings) {
      expect((await user.postStart({ _csrf: user.csrf, action: 'add_phone', phone }, fr)).status).toBe(200);
    }
    const fourth = await user.postStart({ _csrf: user.csrf, action: 'add_phone', phone: '06.98.76.54.32' }, fr);
    expect(fourth.status).toBe(429);
  });

  it('limits the distinct numbers one user tries in a day; a number tried again spends nothing more', async () => {
    const user = await app.agent().signIn('dave');
    for (const phone of ['+49 1512 3456789', '+49 1512 3456788', '+49 1512 3456789', '+49 1512 3456787']) {
      expect((await user.tryStartWithNumber('add_phone', phone)).status, phone).toBe(200);
    }
    const before = (await sms(app)).length;
    const fourth = await user.tryStartWithNumber('add_phone', '+49 1512 3456786');
    expect(fourth.status).toBe(429);
    expect((await sms(app)).length).toBe(before);
    // One of the numbers already tried is still allowed today.
    expect((await user.tryStartWithNumber('add_phone', '+49 1512 3456788')).status).toBe(200);
  });

  it('a restart texts the number kept with the failed attempt; a number in the restart request changes nothing', async () => {
    const user = await app.agent().signIn('erin');
    const first = await user.startWithNumber('add_phone', DE_MOBILE);
    await app.emulator.control.complete(first.sessionId, { outcome: 'failed', reason: 'otp_locked' });
    const failed = await user.landFor(first.sessionId, first.state);
    // The failed page names the number masked and offers the restart with no number in the form.
    expect(failed.body).toContain('The code goes to the number ending ••\u00a080.');
    expect(failed.body).not.toContain('name="phone"');
    expect(failed.body).not.toContain('3456780');
    const restarted = await user.start('add_phone', { restart: first.state, phone: GB_MOBILE });
    expect((await app.attempt(restarted.sessionId))?.destination).toBe(DE_MOBILE);
    expect((await app.emulator.control.outbox()).find((m) => m.sessionId === restarted.sessionId)?.to).toBe(DE_MOBILE);
  });

  it('a restart polices the kept number again: one the policy refuses now is not texted', async () => {
    const user = await app.agent().signIn('gail');
    // An attempt kept from before the policy refused its country (+1 876 is Jamaica), expired since.
    const createdAt = Date.now() - 25 * 3_600_000;
    const state = 'keptBeforeThePolicy_0123456789abcdefghijklm';
    await app.store.insertAttempt({
      state,
      sessionId: `session-${state}`,
      userRef: 'user-gail',
      action: 'add_phone',
      params: {},
      destination: '+18765550123',
      returnTo: '/done/phone',
      sensitivity: 'normal',
      platform: 'web',
      createdAt,
      nextCheckAt: createdAt,
    });
    expect(await app.store.expireAttempts(Date.now(), 24 * 3_600_000)).toBeGreaterThanOrEqual(1);
    const before = { attempts: await app.attemptCount(), sms: (await sms(app)).length };
    const answer = await user.tryStart('add_phone', { restart: state });
    expect(answer.status).toBe(422);
    expect({ attempts: await app.attemptCount(), sms: (await sms(app)).length }).toEqual(before);
  });

  it('a closed tab: the sweep fulfils the typed number, read from the store', async () => {
    const user = await app.agent().signIn('gina');
    const started = await user.startWithNumber('add_phone', '+49 1512 3456770');
    await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
    // Nobody lands; the sweep reads the status once its first check is due.
    await app.clock.shifted(4 * 60_000, () => app.kit.runSweep());
    expect(await app.attempt(started.sessionId)).toMatchObject({ outcome: 'fulfilled', destination: '+4915123456770' });
    expect(fulfilled.find((a) => a.sessionId === started.sessionId)?.destination).toBe('+4915123456770');
  });

  it('binds the service userRef to the typed number; nothing sent at the landing swaps the number marked verified', async () => {
    const user = await app.agent().signIn('frank');
    const older = await user.startWithNumber('add_phone', '+33 6 11 22 33 44');
    const newer = await user.startWithNumber('add_phone', '+33 6 55 66 77 88');
    const key = deriveServiceRefKey(app.secret);
    const stored = await app.attempt(older.sessionId);
    expect(stored?.serviceUserRef).toBe(
      destinationBoundRef(key, { userRef: 'user-frank', destination: '+33611223344' }),
    );
    // The newer number verifies and lands, with a number slipped into the landing's query.
    await app.emulator.control.complete(newer.sessionId, { outcome: 'verified' });
    const landed = await user.land(
      `session_id=${newer.sessionId}&state=${newer.state}&phone=${encodeURIComponent('+33611223344')}`,
    );
    expect(landed.status).toBe(303);
    // Then the older one verifies: 'latest' never applies it after the newer number.
    await app.emulator.control.complete(older.sessionId, { outcome: 'verified' });
    await user.landFor(older.sessionId, older.state);
    // (fulfil may run again in a transaction that rolls back: the committed outcome is what counts)
    const mine = fulfilled.filter((a) => a.sessionId === older.sessionId || a.sessionId === newer.sessionId);
    expect(new Set(mine.map((a) => `${a.sessionId} ${a.destination}`))).toEqual(
      new Set([`${newer.sessionId} +33655667788`]),
    );
    expect((await app.attempt(older.sessionId))?.outcome).toBe('superseded');
  });
});

describeEachAppStore('an allow-list of countries', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { actions: [setNote], destinationPolicy: { allowCountries: ['GB'] } },
    });
  });
  afterAll(async () => {
    await app?.close();
  });
  afterEach(() => {
    delete USERS.pat;
  });

  it('refuses a stored number the metadata cannot read at all (a calling code no country holds), as one of no known country: nothing is texted', async () => {
    // +999 passes the service's E.164 check; +882 (international networks) reads, with no country.
    for (const destination of ['+99912345678', '+8821234567890']) {
      USERS.pat = { userRef: 'user-pat', destination };
      const pat = await app.agent().signIn('pat');
      const before = { attempts: await app.attemptCount(), sms: (await sms(app)).length };
      const answer = await pat.tryStart('set_note');
      expect(answer.status, destination).toBe(422);
      expect({ attempts: await app.attemptCount(), sms: (await sms(app)).length }, destination).toEqual(before);
    }
    const refusals = app.logs.filter((line) => line.includes('destination refused'));
    expect(refusals.map((line) => (JSON.parse(line) as { reason: string }).reason)).toEqual([
      'unknown_country',
      'unknown_country',
    ]);
    expect(refusals.join('\n')).not.toMatch(/12345678|1234567890/);
    USERS.pat = { userRef: 'user-pat', destination: GB_MOBILE };
    expect((await (await app.agent().signIn('pat')).tryStart('set_note')).status).toBe(200);
  });
});

describeEachAppStore('numbers of no country allowed by name', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { actions: [setNote, addPhone], destinationPolicy: { allowCountries: ['GB', 'ZZ'] } },
    });
  });
  afterAll(async () => {
    await app?.close();
  });
  afterEach(() => {
    delete USERS.pat;
  });

  it("texts a satellite number when allowCountries names 'ZZ', the token the SMS pumping rules count it under; other countries stay refused", async () => {
    USERS.pat = { userRef: 'user-pat', destination: '+881612345678' };
    const pat = await app.agent().signIn('pat');
    const started = await pat.start('set_note');
    expect((await app.emulator.control.outbox()).find((m) => m.sessionId === started.sessionId)?.to).toBe(
      '+881612345678',
    );
    const typed = await pat.startWithNumber('add_phone', '+870 773 111 632');
    expect((await app.attempt(typed.sessionId))?.destination).toBe('+870773111632');
    expect((await pat.tryStartWithNumber('add_phone', FR_MOBILE)).status).toBe(422);
  });
});

describeEachAppStore('typed numbers on the mobile start', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      mobileReturnUrl: 'com.example.kit://verify/return',
      kit: { actions: [addPhone] },
    });
  });
  afterAll(async () => {
    await app?.close();
  });
  const post = (body: unknown) =>
    app.agent().request('/verify/start', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-user': 'alice' },
      body: JSON.stringify(body),
    });

  it('reads the JSON body field `phone`; a number that cannot be one is a JSON 422 and sends nothing', async () => {
    const bad = await post({ action: 'add_phone', phone: '12345' });
    expect(bad.status).toBe(422);
    expect(await bad.json()).toEqual({
      error: 'invalid_phone_number',
      message: expect.stringContaining('not a phone number'),
    });
    const refused = await post({ action: 'add_phone', phone: '+44 909 879 0000' });
    expect(await refused.json()).toMatchObject({ error: 'phone_number_refused' });
    expect(await sms(app)).toEqual([]);
    expect((await post({ action: 'add_phone', phone: '+33 6 12 34 56 78' })).status).toBe(200);
    expect(await sms(app)).toEqual([FR_MOBILE]);
  });

  it('refuses `phone` as a list, an object, a JSON number, named twice or past 16 kB with a 4xx, sending and storing nothing', async () => {
    const before = { attempts: (await app.store.listAttempts({ limit: 1000 })).length, sms: (await sms(app)).length };
    for (const phone of [[FR_MOBILE], { number: FR_MOBILE }, 33612345678, `${FR_MOBILE}${' '.repeat(20_000)}`]) {
      const answer = await post({ action: 'add_phone', phone });
      expect(answer.status, JSON.stringify(phone).slice(0, 40)).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
    }
    const twice = await app.agent().request('/verify/start', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-user': 'alice' },
      body: `{"action":"add_phone","phone":"${DE_MOBILE}","phone":"${FR_MOBILE}"}`,
    });
    expect(twice.status).toBe(400);
    expect((await app.store.listAttempts({ limit: 1000 })).length).toBe(before.attempts);
    expect((await sms(app)).length).toBe(before.sms);
    // Digits of another script are digits: the same number, texted as E.164.
    expect((await post({ action: 'add_phone', phone: '+٣٣٦١٢٣٤٥٦٧٨' })).status).toBe(200);
    expect((await sms(app)).at(-1)).toBe(FR_MOBILE);
  });
});

describeEachAppStore("a refused number handed to the app's error handler (errors: 'next')", (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { actions: [addPhone], errors: 'next', destinationPolicy: { refuseCountries: ['JM'] } },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('carries one message whatever rule refused it (country or type), so an app that shows it teaches nothing; nothing is stored or sent', async () => {
    const user = await app.agent().signIn('alice');
    const before = { attempts: await app.attemptCount(), errors: app.errors.length };
    // +1 876 is refused as Jamaica's; +44 909 as premium-rate.
    for (const typed of ['+1 876 555 0123', '+44 909 879 0000']) {
      expect((await user.tryStartWithNumber('add_phone', typed)).status, typed).toBe(422);
    }
    const handed = app.errors.slice(before.errors).map((line) => JSON.parse(line) as { code: string; message: string });
    expect(handed.map((error) => error.code)).toEqual(['phone_number_refused', 'phone_number_refused']);
    expect(handed[0]!.message).toBe(handed[1]!.message);
    expect(handed[0]!.message).not.toMatch(/country|type/i);
    // The log line still says which rule, with the number masked.
    const reasons = app.logs
      .filter((line) => line.includes('destination refused'))
      .map((line) => JSON.parse(line).reason);
    expect(reasons).toEqual(['country', 'type']);
    expect(await app.attemptCount()).toBe(before.attempts);
    expect(await sms(app)).toEqual([]);
  });
});

describe('a defaultCountry function of the request', () => {
  let app: TestApp;
  let answer: () => unknown = () => 'FR';
  beforeAll(async () => {
    app = await startTestApp({
      kit: { actions: [addPhone], defaultCountry: () => answer() as string, hookTimeouts: { defaultCountry: 200 } },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('that throws, hangs or returns something other than a country code refuses the start, sending nothing', async () => {
    const user = await app.agent().signIn('alice');
    const cases: Array<[string, () => unknown]> = [
      [
        'throws',
        () => {
          throw new Error('profile service down');
        },
      ],
      ['hangs', () => new Promise(() => {})],
      ['lower case', () => 'fr'],
      ['unknown code', () => 'XX'],
    ];
    for (const [name, chooser] of cases) {
      answer = chooser;
      const refused = await user.tryStartWithNumber('add_phone', '06 12 34 56 78');
      expect(refused.status, name).toBe(500);
      expect(refused.body).not.toContain('profile service down');
    }
    expect(app.logs.join('\n')).toContain('returned something other than an ISO 3166-1 alpha-2 code');
    expect(app.logs.join('\n')).toContain('raise hookTimeouts.defaultCountry');
    expect(await sms(app)).toEqual([]);
    // undefined: no default country, so only an international number reads.
    answer = () => undefined;
    expect((await user.tryStartWithNumber('add_phone', '06 12 34 56 78')).status).toBe(422);
    expect((await user.tryStartWithNumber('add_phone', '+33 6 12 34 56 78')).status).toBe(200);
    expect(await sms(app)).toEqual([FR_MOBILE]);
  });
});

describe('typed number options', () => {
  const base = {
    baseUrl: 'http://127.0.0.1:1',
    clientId: 'client',
    clientSecret: 'a-client-secret-of-enough-length-0123456789',
    returnUrl: 'http://127.0.0.1:2/verify/return',
    store: { insertAttempt() {}, findAttemptByState() {}, fulfilBatch() {}, recordFailure() {} } as never,
    resolveUser: () => null,
    dangerouslyDisableStartLimits: true,
  };
  const problemsOf = (options: object) => {
    try {
      createVerificationKit({ ...base, ...options } as never);
    } catch (error) {
      expect((error as { code: string }).code).toBe(KitErrorCode.InvalidOptions);
      return (error as Error).message;
    }
    throw new Error('the kit was created');
  };

  it("an entered destination without proves: 'destination' is refused, naming the fix", () => {
    const { proves: _, ...withoutProof } = addPhone;
    expect(problemsOf({ actions: [withoutProof] })).toContain("add `proves: 'destination'`");
    expect(problemsOf({ actions: [{ ...addPhone, proves: 'user' }] })).toContain("add `proves: 'destination'`");
    expect(problemsOf({ actions: [{ ...addPhone, destination: 'typed' }] })).toContain("must be 'user'");
  });

  it("destinationPolicy's country lists take 'ZZ' (numbers of no country), as the SMS pumping rules and the fraud command do", () => {
    for (const destinationPolicy of [{ refuseCountries: ['ZZ'] }, { allowCountries: ['FR', 'ZZ'] }]) {
      expect(() => createVerificationKit({ ...base, actions: [addPhone], destinationPolicy } as never)).not.toThrow();
    }
    expect(problemsOf({ actions: [addPhone], destinationPolicy: { refuseCountries: ['UK'] } })).toContain(
      "or 'ZZ' for numbers of no country",
    );
  });

  it('defaultCountry and destinationPolicy are checked when the kit is created', () => {
    const message = problemsOf({
      actions: [addPhone],
      defaultCountry: 'fr',
      destinationPolicy: { allowCountries: ['XX'], refuseTypes: ['PREMIUM'], blockTypes: [] },
    });
    expect(message).toContain('`defaultCountry` must be an ISO 3166-1 alpha-2 code');
    expect(message).toContain('`destinationPolicy.allowCountries` must be an array');
    expect(message).toContain('`destinationPolicy.refuseTypes` must be an array of number types');
    expect(message).toContain('`destinationPolicy.blockTypes` is not an option');
  });
});

describe('a stored number the destination policy refuses (resolveUser(req).destination, not typed)', () => {
  let web: TestApp;
  let mobile: TestApp;
  /** An app's own wording, given through the `messages` option. */
  const appText = 'Your account’s number cannot get codes from us. Update it under Settings or call us.';
  beforeAll(async () => {
    [web, mobile] = await Promise.all([
      startTestApp({
        kit: {
          actions: [setNote, addPhone],
          messages: { en: { errors: { stored_number_refused: appText } }, fr: demoKitMessages.fr },
        },
      }),
      startTestApp({ mobileReturnUrl: 'com.example.kit://verify/return', kit: { actions: [setNote] } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([web?.close(), mobile?.close()]);
  });
  afterEach(() => {
    delete USERS.pat;
  });

  it('says what the user can do (the app’s own text, or the French), not to type another number, and sends nothing', async () => {
    USERS.pat = { userRef: 'user-pat', destination: PREMIUM };
    const pat = await web.agent().signIn('pat');
    const english = await pat.tryStart('set_note');
    expect(english.status).toBe(422);
    expect(mainOf(english.body)).toContain(appText);
    expect(mainOf(english.body)).not.toMatch(TEACHES_OR_ASKS);
    const french = await pat.postStart({ _csrf: pat.csrf, action: 'set_note' }, { 'accept-language': 'fr' });
    expect(french.status).toBe(422);
    expect(mainOf(french.body)).toContain(
      'Nous ne pouvons pas envoyer de code au numéro de téléphone de votre compte. Changez ce numéro dans votre ' +
        'compte, ou contactez l’assistance.',
    );
    expect(mainOf(french.body)).not.toMatch(TEACHES_OR_ASKS);
    // A typed number refused keeps the number form and its own text.
    const typed = await (await web.agent().signIn('alice')).tryStartWithNumber('add_phone', PREMIUM);
    expect(typed.status).toBe(422);
    expect(typed.body).toContain('name="phone"');
    expect(typed.body).toContain('We cannot send a code to this number. Enter another mobile number.');
    expect(await sms(web)).toEqual([]);
  });

  it('keeps the code phone_number_refused on the mobile start, with the kit’s text for the account’s number', async () => {
    USERS.pat = { userRef: 'user-pat', destination: PREMIUM };
    const answer = await mobile.agent().request('/verify/start', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-user': 'pat' },
      body: JSON.stringify({ action: 'set_note' }),
    });
    expect(answer.status).toBe(422);
    expect(await answer.json()).toEqual({ error: 'phone_number_refused', message: STORED_REFUSED });
    expect(await sms(mobile)).toEqual([]);
  });
});

describe('a restart whose kept typed number the destination policy refuses now', () => {
  let web: TestApp;
  const KEPT_REFUSED = 'We cannot send a code to the number this verification used. Enter another mobile number.';
  const alertOf = (html: string) => /<p id="verify-kit-number-error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];
  beforeAll(async () => {
    web = await startTestApp({ kit: { actions: [addPhone], messages: { fr: demoKitMessages.fr } } });
  });
  afterAll(async () => {
    await web?.close();
  });

  /** An expired add_phone attempt of `name`, its number typed before the policy refused it (premium-rate). */
  async function keptPremiumAttempt(name: string): Promise<string> {
    const createdAt = Date.now() - 25 * 3_600_000;
    const state = `keptPremium_${name}_`.padEnd(43, 'x');
    await web.store.insertAttempt({
      state,
      sessionId: `session-${state}`,
      userRef: `user-${name}`,
      action: 'add_phone',
      params: {},
      destination: PREMIUM,
      returnTo: '/done/phone',
      sensitivity: 'normal',
      platform: 'web',
      createdAt,
      nextCheckAt: createdAt,
    });
    expect(await web.store.expireAttempts(Date.now(), 24 * 3_600_000)).toBeGreaterThanOrEqual(1);
    return state;
  }

  it('gets the empty number form (a new start), says the kept number cannot be used, names no rule, and sends nothing', async () => {
    const alice = await web.agent().signIn('alice');
    const state = await keptPremiumAttempt('alice');
    const before = await web.attemptCount();
    // A number sent with the restart swaps nothing and is not shown back.
    const answer = await alice.tryStart('add_phone', { restart: state, phone: GB_MOBILE });
    expect(answer.status).toBe(422);
    expect(alertOf(answer.body)).toBe(KEPT_REFUSED);
    expect(answer.body).toContain('name="phone" type="tel" autocomplete="tel" value=""');
    expect(answer.body).not.toContain('name="restart"');
    expect(answer.body).not.toContain('9005550123');
    expect(answer.body).not.toContain('7400123456');
    const french = await alice.postStart(
      { _csrf: alice.csrf, action: 'add_phone', restart: state },
      { 'accept-language': 'fr' },
    );
    expect(french.status).toBe(422);
    expect(alertOf(french.body)).toBe(
      'Nous ne pouvons pas envoyer de code au numéro utilisé par cette vérification. Saisissez un autre numéro de mobile.',
    );
    expect({ attempts: await web.attemptCount(), sms: await sms(web) }).toEqual({ attempts: before, sms: [] });
    // The form is a new start: the number typed there is policed again, and an allowed one is texted.
    const retyped = await alice.tryStartWithNumber('add_phone', PREMIUM);
    expect(retyped.status).toBe(422);
    expect(alertOf(retyped.body)).toBe('We cannot send a code to this number. Enter another mobile number.');
    expect(await sms(web)).toEqual([]);
    const started = await alice.startWithNumber('add_phone', GB_MOBILE);
    expect((await web.attempt(started.sessionId))?.destination).toBe(GB_MOBILE);
    expect(await sms(web)).toEqual([GB_MOBILE]);
  });
});
