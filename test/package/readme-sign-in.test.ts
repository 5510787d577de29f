/**
 * The README's smallest complete app, copied as the README shows it: its sign-in stand-in answers a
 * POST without a user name (no form at all, a JSON body, a form without `user`) with a 4xx that says
 * what to enter, no stack and no session. On Express 5 a POST without a form leaves `req.body`
 * undefined.
 */
import { rmSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readmeAppDir } from './scratch.ts';

type CreateReadmeApp = (options: { env: Record<string, string> }) => {
  app: RequestListener;
  kit: { close(): Promise<void> };
  store: { close(): Promise<void> | void };
};

let dir: string;
let server: Server;
let readme: ReturnType<CreateReadmeApp>;
let origin: string;

beforeAll(async () => {
  dir = readmeAppDir('readme-sign-in-');
  const { createApp } = (await import(pathToFileURL(join(dir, 'server.mjs')).href)) as { createApp: CreateReadmeApp };
  readme = createApp({
    env: {
      VERIFY_BASE_URL: 'http://127.0.0.1:9',
      VERIFY_CLIENT_ID: 'readme-app',
      VERIFY_CLIENT_SECRET: 'readme-app-secret-0123456789',
      VERIFY_RETURN_URL: 'http://localhost:3000/verify/return',
      SESSION_SECRET: 'a-session-secret-of-the-test',
      DATABASE_PATH: join(dir, 'app.sqlite'),
    },
  });
  server = createServer(readme.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await readme?.kit.close();
  await readme?.store.close();
  rmSync(dir, { recursive: true, force: true });
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe("the README app's sign-in", () => {
  it.each([
    ['no form at all', {}],
    ['a JSON body', { headers: { 'content-type': 'application/json' }, body: '{"user":"ada","phone":"+15550100009"}' }],
    ['a form without a user', { headers: FORM, body: 'phone=%2B15550100009' }],
    ['a form with an empty user', { headers: FORM, body: 'user=&phone=%2B15550100009' }],
  ])('refuses %s with a 422 that says what to enter, no stack and no session', async (_, post: RequestInit) => {
    const answer = await fetch(`${origin}/login`, { method: 'POST', redirect: 'manual', ...post });
    const text = await answer.text();
    expect(answer.status, text).toBe(422);
    expect(text).toMatch(/^Enter your /);
    expect(text).not.toMatch(/Error|at .*\.m?js/);
    expect(answer.headers.getSetCookie()).toEqual([]);
  });

  it('signs in a user name with a number in international form', async () => {
    const answer = await fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: FORM,
      body: 'user=ada&phone=%2B1%20555%200100%20009',
    });
    expect(answer.status).toBe(303);
    expect(answer.headers.getSetCookie()).toHaveLength(1);
  });
});
