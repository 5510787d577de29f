import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CLIENT,
  loadEnvConfig,
  parseClients,
  parseClientsJson,
  validateClients,
} from '../../emulator/config/config.ts';
import { startEmulator } from '../../emulator/index.ts';
import { WEB_CLIENT, createSession, startTestEmulator } from '../support/emulator.ts';

describe('emulator configuration from the environment', () => {
  it('reads a clients file saved with a byte order mark, as some editors save one', () => {
    const clients = [
      { clientId: 'bom-app', secret: 'bom-secret-0123456789', returnUrl: 'http://localhost:3000/verify/return' },
    ];
    expect(parseClientsJson(`\uFEFF${JSON.stringify(clients)}`, '--clients clients.json')).toMatchObject(clients);
  });

  it('defaults to port 4010, the .env.example client and control on', () => {
    expect(loadEnvConfig({})).toEqual({ port: 4010, clients: [DEFAULT_CLIENT], control: true });
    expect(DEFAULT_CLIENT).toMatchObject({
      clientId: 'demo-client',
      secret: 'demo-secret-change-me',
      returnUrl: 'http://localhost:3000/verify/return',
    });
  });

  it('reads EMULATOR_PAGE_HOST; from code the page stays on the listening host unless pageHost is set', async () => {
    expect(loadEnvConfig({ EMULATOR_PAGE_HOST: 'verify.localhost' }).pageHost).toBe('verify.localhost');
    for (const [pageHost, expected] of [
      [undefined, '127.0.0.1'],
      ['verify.localhost', 'verify.localhost'],
    ] as const) {
      const emulator = await startEmulator({ port: 0, clients: [WEB_CLIENT], control: false, log: () => {}, pageHost });
      try {
        const created = await createSession(emulator.url, WEB_CLIENT);
        const port = new URL(emulator.url).port;
        expect(new URL(emulator.url).hostname).toBe('127.0.0.1'); // the API never moves
        expect(created.body.verifyUrl).toBe(`http://${expected}:${port}/verify`);
        expect(emulator.pageOrigin).toBe(`http://${expected}:${port}`);
      } finally {
        await emulator.close();
      }
    }
  });

  it('reads EMULATOR_PORT, EMULATOR_CLIENTS and EMULATOR_CONTROL=off', () => {
    const clients = [{ clientId: 'a', secret: 's', returnUrl: 'https://a.example/r' }];
    expect(
      loadEnvConfig({ EMULATOR_PORT: '0', EMULATOR_CLIENTS: JSON.stringify(clients), EMULATOR_CONTROL: 'off' }),
    ).toEqual({
      port: 0,
      clients: [{ ...clients[0], platform: 'web' }],
      control: false,
    });
  });

  it.each([
    [{ EMULATOR_PORT: 'eighty' }, /EMULATOR_PORT must be an integer/],
    [{ EMULATOR_PORT: '70000' }, /EMULATOR_PORT must be an integer/],
    [{ EMULATOR_CONTROL: 'no' }, /EMULATOR_CONTROL must be "on" \(default\) or "off"/],
    [{ EMULATOR_CLIENTS: '{not json' }, /EMULATOR_CLIENTS is not valid JSON/],
    [{ EMULATOR_CLIENTS: '[]' }, /non-empty JSON array/],
    [{ EMULATOR_PAGE_HOST: 'http://verify.localhost:4010' }, /EMULATOR_PAGE_HOST must be a bare host name/],
    [{ EMULATOR_PAGE_HOST: 'verify.localhost/verify' }, /EMULATOR_PAGE_HOST must be a bare host name/],
  ])('explains a bad value %j', (env, message) => {
    expect(() => loadEnvConfig(env)).toThrow(message);
  });

  it.each([
    [[{ secret: 's', returnUrl: 'http://x/r' }], /\[0\]\.clientId must be a non-empty string/],
    [[{ clientId: 'a:b', secret: 's', returnUrl: 'http://x/r' }], /without ":"/],
    [[{ clientId: 'a', returnUrl: 'http://x/r' }], /\[0\]\.secret must be a non-empty string/],
    [[{ clientId: 'a', secret: 's', returnUrl: '/relative' }], /returnUrl must be an absolute URL/],
    [[{ clientId: 'a', secret: 's', returnUrl: 'http://x/r?x=1' }], /must not contain a query/],
    [[{ clientId: 'a', secret: 's', returnUrl: 'myapp://r' }], /must use http or https for a web client/],
    [[{ clientId: 'a', secret: 's', returnUrl: 'https://x/r', platform: 'mobile' }], /custom-scheme deep link/],
    [[{ clientId: 'a', secret: 's', returnUrl: 'https://x/r', platform: 'ios' }], /platform must be "web" or "mobile"/],
    [
      [
        { clientId: 'a', secret: 's', returnUrl: 'https://x/r' },
        { clientId: 'a', secret: 't', returnUrl: 'https://y/r' },
      ],
      /\[1\]\.clientId "a" is registered twice/,
    ],
  ])('rejects clients %j', (clients, message) => {
    expect(() => parseClients(JSON.stringify(clients))).toThrow(message);
  });

  it('startEmulator validates clients passed as options too', async () => {
    await expect(
      startEmulator({ port: 0, clients: [{ clientId: '', secret: 's', returnUrl: 'http://x/r' }] }),
    ).rejects.toThrow(/clientId/);
    expect(validateClients([DEFAULT_CLIENT])).toEqual([DEFAULT_CLIENT]);
  });
});

describe('startEmulator', () => {
  it('listens on an ephemeral 127.0.0.1 port and closes promptly despite keep-alive connections', async () => {
    const emulator = await startEmulator({ port: 0, log: () => {} });
    expect(emulator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${emulator.url}/session/x`)).status).toBe(401); // leaves a keep-alive socket open
    const started = Date.now();
    await emulator.close();
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(fetch(`${emulator.url}/session/x`)).rejects.toThrow();
  });

  it('close() does not wait for a request held by an injected delay', async () => {
    const emulator = await startTestEmulator();
    await emulator.control.setFaults({ createDelayMs: 20_000 });
    const held = createSession(emulator.url, WEB_CLIENT).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await emulator.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await held).toBeInstanceOf(Error);
  });
});
