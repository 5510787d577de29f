/**
 * What a verification proves (`proves` on an action), over HTTP with a software passkey: the
 * hosted page keeps passkeys per userRef and a passkey answers instead of the texted code, so an
 * action that proves the destination sends the service a keyed HMAC of the user AND the number
 * (never the raw number) and fulfils only when the echo equals it. Everything that groups by user
 * (ordering, reads, fulfil, outcome events) still sees the integrator's own userRef.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorClient } from '../../emulator/index.ts';
import { createVerificationKit, KitErrorCode, type ActionDefinition } from '../../middleware/index.ts';
import type { OutcomeEvent, VerifiedAttempt } from '../../middleware/types.ts';
import { deriveServiceRefKey, destinationBoundRef } from '../../middleware/routes/service-user-ref.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { openHostedPage, postForm, readSession, startTestEmulator, type TestEmulator } from '../support/emulator.ts';
import { SoftAuthenticator } from '../support/soft-authenticator.ts';
import { USERS } from '../support/users.ts';
import { waitFor } from '../support/wait-for.ts';

const RP_ID = 'verify.localhost';
const FIRST_NUMBER = '+15550100001';
const SECOND_NUMBER = '+15550107777';

let emulator: TestEmulator;
let client: EmulatorClient;
let app: TestApp;
const fulfilled: VerifiedAttempt[] = [];
const events: OutcomeEvent[] = [];

// Synchronous effects (SQLite's transaction is): what `fulfil` received is what the test checks.
const actions: ActionDefinition<unknown>[] = [
  {
    name: 'confirm_number',
    operationSensitivity: 'normal',
    successPath: '/done/number',
    proves: 'destination',
    fulfil: (_tx, attempt) => void fulfilled.push(attempt),
  },
  {
    name: 'change_number',
    operationSensitivity: 'sensitive',
    successPath: '/done/number',
    destination: 'entered',
    proves: 'destination',
    fulfil: (_tx, attempt) => void fulfilled.push(attempt),
  },
  {
    name: 'grant',
    operationSensitivity: 'sensitive',
    successPath: '/done/grant',
    fulfil: (_tx, attempt) => void fulfilled.push(attempt),
  },
];

beforeAll(async () => {
  app = await startTestApp({
    service: async (returnUrl) => {
      client = { clientId: 'proves-client', secret: 'proves-secret-0123456789abcdef', returnUrl };
      emulator = await startTestEmulator({ clients: [client], pageHost: RP_ID });
      return { baseUrl: emulator.url, clientId: client.clientId, clientSecret: client.secret };
    },
    kit: { actions, onOutcome: (event) => void events.push(event) },
  });
});
afterAll(async () => {
  await app?.close();
  await emulator?.close();
});
afterEach(() => {
  delete USERS.dana;
});

/** Dana, a user whose number the test sets (and may change). */
function dana(destination: string) {
  USERS.dana = { userRef: 'user-dana', destination };
  return USERS.dana;
}

const statusOf = async (sessionId: string) => (await readSession(emulator.url, client, sessionId)).body;
const smsFor = async (sessionId: string) =>
  (await emulator.control.outbox()).filter((message) => message.sessionId === sessionId);

/** The WebAuthn options a passkey page carries in data-options. */
function challengeOf(html: string): string {
  const raw = /data-options="([^"]+)"/.exec(html)?.[1];
  if (raw === undefined) throw new Error('no passkey form on this page');
  const json = raw.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
  return (JSON.parse(json) as { challenge: string }).challenge;
}

/** Starts `action` as a signed-in Dana and opens its hosted page as her browser would. */
async function startAndOpen(action: string, fields: Record<string, string> = {}) {
  const agent = await app.agent().signIn('dana');
  const started = await agent.start(action, fields);
  const verifyUrl = started.verifyUrl;
  const page = await openHostedPage(verifyUrl, started.handoff);
  expect(page.response.status).toBe(200);
  const post = (path: string, fields: Record<string, string>) =>
    postForm(`${verifyUrl}${path}`, { page_binding: page.binding ?? '', ...fields }, page.deviceCookie);
  const origin = new URL(started.verifyUrl).origin;
  return { agent, started, page, post, origin };
}

/** Enters the texted code and saves `authenticator`'s passkey for the session's userRef. */
async function codeThenEnrol(opened: Awaited<ReturnType<typeof startAndOpen>>, authenticator: SoftAuthenticator) {
  const offer = await opened.post('/code', { code: await emulator.control.codeFor(opened.started.sessionId) });
  expect(offer.status).toBe(200);
  const challenge = challengeOf(await offer.text());
  const credential = authenticator.register({ challenge, origin: opened.origin, rpId: RP_ID });
  expect((await opened.post('/passkey/enrol', { credential: JSON.stringify(credential) })).status).toBe(303);
}

async function answerWithPasskey(opened: Awaited<ReturnType<typeof startAndOpen>>, authenticator: SoftAuthenticator) {
  const challenge = challengeOf(opened.page.html);
  const credential = authenticator.assert({ challenge, origin: opened.origin, rpId: RP_ID });
  return opened.post('/passkey', { credential: JSON.stringify(credential) });
}

describe("proves: 'destination'", () => {
  it('sends the service a keyed HMAC of the user and the number, never the number or the user id', async () => {
    const user = dana(FIRST_NUMBER);
    const { agent, started } = await startAndOpen('confirm_number');
    const sent = (await statusOf(started.sessionId)).userRef as string;
    expect(sent).toMatch(/^vkd1_[A-Za-z0-9_-]{43}$/);
    expect(sent).not.toContain('0100001');
    expect(sent).not.toContain('dana');

    // Stored beside the attempt for the echo check; the same pair, the same ref; another number, another.
    const stored = await app.attempt(started.sessionId);
    expect(stored).toMatchObject({ userRef: 'user-dana', serviceUserRef: sent, destination: FIRST_NUMBER });
    const again = await agent.start('confirm_number');
    expect((await statusOf(again.sessionId)).userRef).toBe(sent);
    USERS.dana = { ...user, destination: SECOND_NUMBER };
    const other = await agent.start('confirm_number');
    expect((await statusOf(other.sessionId)).userRef).toMatch(/^vkd1_/);
    expect((await statusOf(other.sessionId)).userRef).not.toBe(sent);
  });

  it('fulfils by SMS with the real user everywhere: fulfil, outcome event, kit.attempts, ordering', async () => {
    dana(FIRST_NUMBER);
    const older = await startAndOpen('confirm_number');
    dana(SECOND_NUMBER);
    const newer = await startAndOpen('confirm_number');
    const location = await newer.post('/code', { code: await emulator.control.codeFor(newer.started.sessionId) });
    expect(location.status).toBe(200); // the passkey offer; the session is verified already
    const landed = await newer.agent.landFor(newer.started.sessionId, newer.started.state);
    expect(landed.status).toBe(303);
    expect(landed.location).toBe('/done/number');

    expect(fulfilled.at(-1)).toMatchObject({
      sessionId: newer.started.sessionId,
      userRef: 'user-dana',
      destination: SECOND_NUMBER,
    });
    // 'latest' orders by the integrator's user: the older attempt (another number, another service ref) is superseded.
    expect(await app.attempt(older.started.sessionId)).toMatchObject({ outcome: 'superseded' });
    await waitFor(() => events.some((e) => e.sessionId === newer.started.sessionId), 5000, 'the outcome event');
    const event = events.find((e) => e.sessionId === newer.started.sessionId);
    // The event carries the number masked (fulfil got it whole).
    expect(event).toMatchObject({
      outcome: 'fulfilled',
      userRef: 'user-dana',
      destination: `••\u00a0${SECOND_NUMBER.slice(-2)}`,
    });
    const listed = await app.kit.attempts.find({ userRef: 'user-dana' });
    expect(listed.map((summary) => summary.sessionId)).toContain(newer.started.sessionId);
  });

  it('a passkey saved for this number verifies it again (no SMS); one saved for another number never does', async () => {
    const authenticator = new SoftAuthenticator();
    dana(FIRST_NUMBER);
    const enrolled = await startAndOpen('confirm_number');
    await codeThenEnrol(enrolled, authenticator);
    expect((await enrolled.agent.landFor(enrolled.started.sessionId, enrolled.started.state)).status).toBe(303);

    // The same number: the page asks for the passkey, no SMS, and the kit fulfils (the echo is the bound ref).
    const again = await startAndOpen('confirm_number');
    expect(await smsFor(again.started.sessionId)).toEqual([]);
    expect((await answerWithPasskey(again, authenticator)).status).toBe(303);
    expect((await again.agent.landFor(again.started.sessionId, again.started.state)).status).toBe(303);
    expect(fulfilled.at(-1)).toMatchObject({ sessionId: again.started.sessionId, destination: FIRST_NUMBER });

    // Her number changes: the code goes to the new number, and the saved passkey is refused there.
    dana(SECOND_NUMBER);
    const moved = await startAndOpen('confirm_number');
    expect((await smsFor(moved.started.sessionId)).map((sms) => sms.to)).toEqual([SECOND_NUMBER]);
    expect(moved.page.html).not.toContain('data-options');
    const challenge = challengeOf(again.page.html); // any challenge: this userRef has no passkey to check it against
    const forced = authenticator.assert({ challenge, origin: moved.origin, rpId: RP_ID });
    expect((await moved.post('/passkey', { credential: JSON.stringify(forced) })).status).toBe(400);
    expect(await statusOf(moved.started.sessionId)).toMatchObject({ status: 'pending' });
    const fulfilments = fulfilled.length;
    const landing = await moved.agent.landFor(moved.started.sessionId, moved.started.state);
    expect(landing.status).toBe(200); // the "still confirming" page
    expect(fulfilled).toHaveLength(fulfilments);
    expect(await app.attempt(moved.started.sessionId)).toMatchObject({ outcome: 'pending' });
  });
});

describe('a number the user types', () => {
  it("her old number's passkey never answers for the number she types: the new number gets the code", async () => {
    const authenticator = new SoftAuthenticator();
    dana('+15550109999'); // a number no earlier test saved a passkey for
    const confirmed = await startAndOpen('confirm_number');
    await codeThenEnrol(confirmed, authenticator);
    expect((await confirmed.agent.landFor(confirmed.started.sessionId, confirmed.started.state)).status).toBe(303);

    const changing = await startAndOpen('change_number', { phone: '+33 6 12 34 56 78' });
    expect((await smsFor(changing.started.sessionId)).map((sms) => sms.to)).toEqual(['+33612345678']);
    expect(changing.page.html).not.toContain('data-options');
    // Her stored number still offers the passkey; its challenge is forced on the typed number's page.
    const old = await startAndOpen('confirm_number');
    const challenge = challengeOf(old.page.html);
    const forced = authenticator.assert({ challenge, origin: changing.origin, rpId: RP_ID });
    expect((await changing.post('/passkey', { credential: JSON.stringify(forced) })).status).toBe(400);
    expect(await statusOf(changing.started.sessionId)).toMatchObject({ status: 'pending' });
    // The texted code verifies it, and fulfil gets the typed number.
    const code = await emulator.control.codeFor(changing.started.sessionId);
    expect((await changing.post('/code', { code })).status).toBe(200);
    expect((await changing.agent.landFor(changing.started.sessionId, changing.started.state)).status).toBe(303);
    expect(fulfilled.at(-1)).toMatchObject({ sessionId: changing.started.sessionId, destination: '+33612345678' });
  });
});

describe("proves: 'user' (the default) is unchanged", () => {
  it("sends the user's own userRef, stores no other, and its passkey answers for the user", async () => {
    const authenticator = new SoftAuthenticator();
    dana(FIRST_NUMBER);
    const first = await startAndOpen('grant');
    expect(await statusOf(first.started.sessionId)).toMatchObject({ userRef: 'user-dana' });
    expect(await app.attempt(first.started.sessionId)).toMatchObject({ userRef: 'user-dana', serviceUserRef: null });
    await codeThenEnrol(first, authenticator);
    expect((await first.agent.landFor(first.started.sessionId, first.started.state)).status).toBe(303);

    // A user action's passkey answers for the user, whatever the number now is: that is all it proves.
    dana(SECOND_NUMBER);
    const next = await startAndOpen('grant');
    expect(await smsFor(next.started.sessionId)).toEqual([]);
    expect((await answerWithPasskey(next, authenticator)).status).toBe(303);
    expect((await next.agent.landFor(next.started.sessionId, next.started.state)).status).toBe(303);
    expect(fulfilled.at(-1)).toMatchObject({ sessionId: next.started.sessionId, userRef: 'user-dana' });
  });
});

describe('the echo check holds the bound ref', () => {
  it("a destination attempt whose session echoes the user's plain userRef is not fulfilled", async () => {
    let service: TestEmulator | undefined;
    const echoPlain = await startTestApp({
      service: async (returnUrl) => {
        const own = { clientId: 'echo-client', secret: 'echo-secret-0123456789abcdef', returnUrl };
        service = await startTestEmulator({ clients: [own] });
        return { baseUrl: service.url, clientId: own.clientId, clientSecret: own.secret };
      },
      kit: { actions },
      // A service that answered for the user, not for the number bound into the ref it was sent.
      wrapClient: (real) => ({
        ...real,
        createSession: (input, key) => real.createSession(input, key),
        async getSession(sessionId) {
          const status = await real.getSession(sessionId);
          return { ...status, userRef: 'user-dana' };
        },
        close: () => real.close(),
      }),
    });
    try {
      dana(FIRST_NUMBER);
      const agent = await echoPlain.agent().signIn('dana');
      const started = await agent.start('confirm_number');
      await service!.control.completeSession(started.sessionId, 'verified');
      const fulfilments = fulfilled.length;
      const landing = await agent.landFor(started.sessionId, started.state);
      expect(landing.status).toBe(502);
      expect(fulfilled).toHaveLength(fulfilments);
      expect(await echoPlain.attempt(started.sessionId)).toMatchObject({ outcome: 'pending' });
      expect(echoPlain.logs.join('\n')).toContain(KitErrorCode.ServiceResponseMismatch);
    } finally {
      await echoPlain.close();
      await service?.close();
    }
  });
});

describe('the bound ref', () => {
  it('is one per user and number: the same for any spelling of the number, another for another user or number', () => {
    const key = deriveServiceRefKey('client-secret-one');
    const ref = destinationBoundRef(key, { userRef: 'user-dana', destination: FIRST_NUMBER });
    expect(destinationBoundRef(key, { userRef: 'user-dana', destination: '+1 (555) 010-0001' })).toBe(ref);
    expect(destinationBoundRef(key, { userRef: 'user-dana', destination: '0015550100001' })).toBe(ref);
    expect(destinationBoundRef(key, { userRef: 'user-dan', destination: FIRST_NUMBER })).not.toBe(ref);
    expect(destinationBoundRef(key, { userRef: 'user-dana', destination: SECOND_NUMBER })).not.toBe(ref);
    // Keyed: without the server's secret the ref cannot be recomputed by enumerating numbers.
    const otherKey = deriveServiceRefKey('client-secret-two');
    expect(destinationBoundRef(otherKey, { userRef: 'user-dana', destination: FIRST_NUMBER })).not.toBe(ref);
  });
});

describe('the option', () => {
  it('refuses any other value of proves, naming both and what each proves', () => {
    const wrong = { ...actions[0]!, proves: 'number' } as unknown as ActionDefinition<unknown>;
    expect(() =>
      createVerificationKit({
        baseUrl: 'https://verify.example.com',
        clientId: 'c',
        clientSecret: 'test-secret',
        returnUrl: 'https://app.example.com/verify/return',
        store: app.store,
        actions: [wrong],
        resolveUser: () => null,
      }),
    ).toThrow(/`actions\[0\] \("confirm_number"\)\.proves` must be 'user' .* or 'destination' .*: got "number"/);
  });
});
