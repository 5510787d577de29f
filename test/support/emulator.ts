/** Starts an emulator per suite and offers small typed fetch helpers for its API, hosted page and control API. */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { emulatorControl, type EmulatorControl, type SmsMessage } from '../../emulator/control/control-client.ts';
import { startEmulator, type EmulatorClient, type EmulatorOptions } from '../../emulator/index.ts';
import { loopbackFetch } from '../../testing/loopback-fetch.ts';

export type Json = Record<string, unknown>;

export const WEB_CLIENT: EmulatorClient = {
  clientId: 'web-client',
  secret: 'web-secret-0123456789',
  returnUrl: 'http://localhost:3999/verify/return',
};
export const OTHER_CLIENT: EmulatorClient = {
  clientId: 'other-client',
  secret: 'other-secret-0123456789',
  returnUrl: 'https://other.example/done',
};
export const MOBILE_CLIENT: EmulatorClient = {
  clientId: 'mobile-client',
  secret: 'mobile-secret-0123456789',
  returnUrl: 'com.example.app://verify/return',
  platform: 'mobile',
};

export interface TestEmulator {
  url: string;
  /** Where the hosted page is served (`url` unless `pageHost` names another host). */
  pageOrigin: string;
  /** Every line the emulator logged (SMS lines). */
  logLines: string[];
  control: ControlApi;
  close(): Promise<void>;
}

export async function startTestEmulator(options: EmulatorOptions = {}): Promise<TestEmulator> {
  const logLines: string[] = [];
  const emulator = await startEmulator({
    port: 0,
    clients: [WEB_CLIENT, OTHER_CLIENT, MOBILE_CLIENT],
    control: true,
    log: (line) => logLines.push(line),
    ...options,
  });
  return {
    url: emulator.url,
    pageOrigin: emulator.pageOrigin,
    logLines,
    control: controlApi(emulator.url),
    close: () => emulator.close(),
  };
}

/**
 * The suite's emulator (startTestEmulator's): started before the suite's first test, closed after
 * its last, and with `resetEach` reset through the control API before each test. Call it
 * where the suite is declared (top level or inside a describe); read its fields in hooks and tests.
 * `options` may be a function, evaluated when the emulator starts, for what earlier hooks decide.
 */
export function useTestEmulator(
  options: EmulatorOptions | (() => EmulatorOptions) = {},
  { resetEach = false }: { resetEach?: boolean } = {},
): TestEmulator {
  let running: TestEmulator | undefined;
  const current = (): TestEmulator => {
    if (running === undefined)
      throw new Error('The suite emulator runs from beforeAll to afterAll: read it in a hook or a test.');
    return running;
  };
  beforeAll(async () => {
    running = await startTestEmulator(typeof options === 'function' ? options() : options);
  });
  afterAll(async () => {
    await running?.close();
    running = undefined;
  });
  if (resetEach) beforeEach(() => current().control.reset());
  return {
    get url() {
      return current().url;
    },
    get pageOrigin() {
      return current().pageOrigin;
    },
    get logLines() {
      return current().logLines;
    },
    get control() {
      return current().control;
    },
    close: () => current().close(),
  };
}

export function basicAuth(client: Pick<EmulatorClient, 'clientId' | 'secret'>): string {
  return `Basic ${Buffer.from(`${client.clientId}:${client.secret}`).toString('base64')}`;
}

/** A valid create body for the client; override or delete (value undefined) any field. */
export function sessionBody(client: EmulatorClient, overrides: Json = {}): Json {
  const body: Json = {
    returnUrl: client.returnUrl,
    channel: 'sms',
    destination: '+15551234567',
    operationSensitivity: 'normal',
    userRef: 'user-42',
    state: `state-${Math.random().toString(36).slice(2)}`,
    platform: client.platform ?? 'web',
    ...overrides,
  };
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}

export interface JsonAnswer {
  status: number;
  headers: Headers;
  body: Json;
}

async function jsonAnswer(response: Response): Promise<JsonAnswer> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Json) : {} };
}

export async function createSession(
  url: string,
  client: EmulatorClient,
  body: unknown = sessionBody(client),
  options: { idempotencyKey?: string; authorization?: string | null } = {},
): Promise<JsonAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const authorization = options.authorization === undefined ? basicAuth(client) : options.authorization;
  if (authorization !== null) headers.authorization = authorization;
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  return jsonAnswer(await fetch(`${url}/session`, { method: 'POST', headers, body: JSON.stringify(body) }));
}

/** A created session's fields, failing loudly when the create did not succeed. */
export async function newSession(url: string, client: EmulatorClient, overrides: Json = {}) {
  const body = sessionBody(client, overrides);
  const answer = await createSession(url, client, body);
  if (answer.status !== 200) throw new Error(`create failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return {
    sessionId: answer.body.sessionId as string,
    verifyUrl: answer.body.verifyUrl as string,
    handoff: answer.body.handoff as string,
    state: body.state as string,
    userRef: body.userRef as string,
  };
}

export async function readSession(
  url: string,
  client: EmulatorClient,
  sessionId: string,
  authorization?: string | null,
): Promise<JsonAnswer> {
  const auth = authorization === undefined ? basicAuth(client) : authorization;
  const headers: Record<string, string> = auth === null ? {} : { authorization: auth };
  return jsonAnswer(await fetch(`${url}/session/${encodeURIComponent(sessionId)}`, { headers }));
}

/** POSTs a form without following redirects, optionally with the device cookie; a `*.localhost` page as a browser reaches it. */
export async function postForm(target: string, fields: Record<string, string>, cookie?: string): Promise<Response> {
  return loopbackFetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(fields).toString(),
  });
}

export interface HostedPage {
  response: Response;
  html: string;
  /** `emu_device_<sessionId>=…` as a Cookie header value. */
  deviceCookie: string | undefined;
  /** The hidden page_binding field of the code form. */
  binding: string | undefined;
}

export async function openHostedPage(verifyUrl: string, handoff: string): Promise<HostedPage> {
  const response = await postForm(verifyUrl, { hx: handoff });
  const html = await response.text();
  const setCookie = response.headers.getSetCookie().find((line) => line.startsWith('emu_device_'));
  return {
    response,
    html,
    deviceCookie: setCookie?.split(';')[0],
    binding: /name="page_binding" value="([^"]+)"/.exec(html)?.[1],
  };
}

/** Submits a code on the hosted page; `verifyUrl` is the session's, the code form posts under it. */
export async function submitCode(
  verifyUrl: string,
  page: { binding?: string; deviceCookie?: string },
  code: string,
  cookie = page.deviceCookie,
): Promise<Response> {
  return postForm(`${verifyUrl}/code`, { page_binding: page.binding ?? '', code }, cookie);
}

/**
 * The emulator's control API for tests: the shipped typed calls (`completeSession`, `injectFaults`,
 * `stats`, `reset`, `advanceClock`, `latestCode`, `sentMessages`, which throw when refused), plus
 * the raw answers a test about the control API itself or about refusals needs.
 */
export interface ControlApi extends EmulatorControl {
  outbox(): Promise<SmsMessage[]>;
  /** The newest code texted for the session. */
  codeFor(sessionId: string): Promise<string>;
  /** POST /_control/faults, its answer as it came. */
  setFaults(faults: Json): Promise<Response>;
  /** POST /_control/sessions/{id}/complete, its answer as it came. */
  complete(sessionId: string, body: Json): Promise<Response>;
}

export function controlApi(url: string): ControlApi {
  const post = (path: string, body: Json) =>
    fetch(`${url}/_control${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const typed = emulatorControl(url);
  return {
    ...typed,
    outbox: () => typed.sentMessages(),
    codeFor: (sessionId) => typed.latestCode({ sessionId }),
    setFaults: (faults) => post('/faults', faults),
    complete: (sessionId, body) => post(`/sessions/${encodeURIComponent(sessionId)}/complete`, body),
  };
}
