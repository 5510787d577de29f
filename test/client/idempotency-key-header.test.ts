/**
 * The interface: an `Idempotency-Key` is "any string ... at most 255 characters". The client sends
 * it as an HTTP header value, which carries as written only visible ASCII with spaces or tabs
 * between: any other key is refused at once, with a message saying so, and nothing is sent (undici
 * refuses a character past U+00FF, which would otherwise be retried as a network error).
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createVerifyClient } from '../../middleware/client/client.ts';
import type { CreateSessionInput } from '../../middleware/types.ts';
import { closeServer, listen } from '../support/listen.ts';

const input: CreateSessionInput = {
  returnUrl: 'http://localhost:3000/verify/return',
  destination: '+15550100001',
  operationSensitivity: 'normal',
  userRef: 'user-1',
  state: 'state-1',
  platform: 'web',
};
const created = {
  isSuccess: true,
  sessionId: 'sess-1',
  verifyUrl: 'https://verify.example/v',
  handoff: 'hx-1',
  expiresInSeconds: 120,
  binding: 'form_post',
};

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(closeServer));
});

/** A service that answers every create with a success and keeps the keys it was sent. */
async function service(): Promise<{ url: string; keys: (string | string[] | undefined)[] }> {
  const keys: (string | string[] | undefined)[] = [];
  const server = http.createServer((req, res) => {
    keys.push(req.headers['idempotency-key']);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(created));
  });
  servers.push(server);
  return { url: `http://127.0.0.1:${await listen(server)}`, keys };
}

function client(url: string) {
  return createVerifyClient({
    baseUrl: url,
    clientId: 'client-1',
    clientSecret: 'sk_test_secret-1',
    retry: { maxAttempts: 2, baseDelayMs: 5 },
  });
}

describe('an Idempotency-Key the header cannot carry as written is refused before any request', () => {
  it.each([
    ['a character past Latin-1', 'key-🔑'],
    ['200 characters past Latin-1 (400 UTF-16 units, within 255 characters)', '🔑'.repeat(200)],
    ['a Latin-1 letter, sent as a byte a service reading UTF-8 reads as another key', 'clé-1'],
    ['a line break', 'key\r\nx-injected: 1'],
    ['a leading space, which the service would drop', ' key-1'],
  ])('refuses %s as invalid_options naming what a header value holds', async (_name, key) => {
    const { url, keys } = await service();
    const error = await client(url)
      .createSession(input, key)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid_options' });
    expect((error as Error).message).toMatch(/what an HTTP header value carries as written: visible ASCII characters/);
    expect(keys).toHaveLength(0);
  });

  it('counts characters, not UTF-16 units: 256 characters are refused as too long, saying how many', async () => {
    const { url, keys } = await service();
    await expect(client(url).createSession(input, 'k'.repeat(256))).rejects.toThrow(/1 to 255 characters; it has 256/);
    expect(keys).toHaveLength(0);
  });

  it('sends a key of visible ASCII with spaces and tabs between as written', async () => {
    const { url, keys } = await service();
    await client(url).createSession(input, 'key 1\tof attempt~9');
    expect(keys).toEqual(['key 1\tof attempt~9']);
  });
});
