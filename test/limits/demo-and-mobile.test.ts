/**
 * SMS pumping: the start route's limits per user, per destination and per client IP, with the
 * kit's defaults (on by default with the SQLite store). A limited start answers 429 with
 * Retry-After (an HTML page on the web demo, JSON on a mobile kit) and creates no session: the
 * emulator's `creates` and `smsSent` do not move, no attempt row is written.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerificationKit } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { useTestEmulator } from '../support/emulator.ts';
import { userNamed } from '../support/users.ts';
import { rawRequest } from '../support/agent.ts';
import { captureConsole, leaks, snapshot, startSecStack, type SecStack } from '../support/security-stack.ts';
import { closeServer, listen } from '../support/listen.ts';

describe('web (the demo): limited starts get a 429 page with Retry-After and send no SMS', () => {
  let stack: SecStack;
  let restore: () => void;
  beforeAll(async () => {
    stack = await startSecStack();
    restore = captureConsole(stack.recorder.logs);
  });
  afterAll(async () => {
    restore?.();
    await stack?.close();
  });

  it('per destination (and user): the 6th start within 10 minutes is refused before any session exists', async () => {
    const alice = await stack.agent().signIn('alice');
    for (let i = 0; i < 5; i++) await alice.start('confirm_phone');
    const before = await snapshot(stack);
    const stats = await stack.control.stats();
    for (let i = 0; i < 3; i++) {
      const refused = await alice.postStart({ _csrf: alice.csrf, action: 'confirm_phone' });
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(10 * 60);
      expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
      expect(refused.body).toMatch(/too many/i);
      expect(refused.body).not.toContain('verify-kit-handoff');
    }
    const after = await stack.control.stats();
    expect(after.creates).toBe(stats.creates);
    expect(after.smsSent).toBe(stats.smsSent);
    const now = (await snapshot(stack)) as Record<string, unknown>;
    expect(now.verify_kit_attempts).toEqual((before as Record<string, unknown>).verify_kit_attempts);
    // Another user (another number) is not affected by Alice's budget.
    const bob = await stack.agent().signIn('bob');
    await bob.start('confirm_phone');
    expect((await stack.control.stats()).creates).toBe(stats.creates + 1);
  });

  it('the secret and handoffs never leaked in this file', () => {
    expect(leaks(stack)).toEqual([]);
  });
});

describe('mobile (JSON): per destination, per user and per IP; counters survive a restart', () => {
  let dir: string;
  const RETURN_URL = 'com.example.sec://verify/return';
  const CLIENT = {
    clientId: 'sec-mobile',
    secret: `sec-mobile-${randomBytes(12).toString('hex')}`,
    returnUrl: RETURN_URL,
    platform: 'mobile' as const,
  };
  const emulator = useTestEmulator({ clients: [CLIENT] });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sec-limits-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** A mobile kit app: the user and destination come from headers (a stand-in for the app's bearer auth). */
  async function mobileApp(path: string) {
    const db: Database = new BetterSqlite3(path);
    const store = createSqliteStore({ database: db });
    const kit = createVerificationKit<Database>({
      baseUrl: emulator.url,
      clientId: CLIENT.clientId,
      clientSecret: CLIENT.secret,
      returnUrl: RETURN_URL,
      platform: 'mobile',
      store,
      actions: [{ name: 'grant', operationSensitivity: 'normal', successPath: '/done', fulfil() {} }],
      resolveUser(req) {
        const name = req.get('x-user');
        if (name === undefined) return null;
        return {
          userRef: userNamed(name).userRef,
          destination: req.get('x-destination') ?? userNamed(name).destination,
        };
      },
    });
    const app = express();
    app.use(kit.router);
    const server: Server = createServer(app);
    const url = new URL(`http://127.0.0.1:${await listen(server)}/verify/start`);
    const attempts = async () => (await store.listAttempts({ limit: Number.MAX_SAFE_INTEGER })).length;
    return {
      start: (user: string, destination?: string) =>
        rawRequest(
          url,
          'POST',
          {
            'content-type': 'application/json',
            'x-user': user,
            ...(destination ? { 'x-destination': destination } : {}),
          },
          JSON.stringify({ action: 'grant' }),
        ),
      attempts,
      async close() {
        await kit.close();
        await closeServer(server);
        db.close();
      },
    };
  }

  async function expectRefused(answer: { status: number; headers: Record<string, unknown>; body: string }) {
    expect(answer.status).toBe(429);
    expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    expect(String(answer.headers['content-type'])).toMatch(/^application\/json/);
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    expect(body.error).toBe('rate_limited');
    expect(body).not.toHaveProperty('handoff');
  }

  it('per destination: five different users texting one number, the sixth is refused (no session, no SMS)', async () => {
    const app = await mobileApp(join(dir, 'destination.sqlite'));
    try {
      const number = '+15559990001';
      for (let i = 0; i < 5; i++) expect((await app.start(`pump${i}`, number)).status).toBe(200);
      const stats = await emulator.control.stats();
      const rows = await app.attempts();
      expect(rows).toBe(5);
      await expectRefused(await app.start('pump5', number));
      expect(await emulator.control.stats()).toMatchObject({ creates: stats.creates, smsSent: stats.smsSent });
      expect(await app.attempts()).toBe(rows);
    } finally {
      await app.close();
    }
  });

  it('per user: one user rotating through numbers is refused after their budget, and still after a restart', async () => {
    const path = join(dir, 'user.sqlite');
    let app = await mobileApp(path);
    let limitedAt = -1;
    try {
      for (let i = 0; i < 15 && limitedAt < 0; i++) {
        const answer = await app.start('rotator', `+1555888${String(i).padStart(4, '0')}`);
        if (answer.status === 429) limitedAt = i;
        else expect(answer.status).toBe(200);
      }
      expect(limitedAt).toBeGreaterThan(0); // a budget exists and is more than zero
      expect(limitedAt).toBeLessThan(15);
      const stats = await emulator.control.stats();
      await app.close();
      app = await mobileApp(path); // a restart: the counters live in the SQLite file
      await expectRefused(await app.start('rotator', '+15558889999'));
      expect((await emulator.control.stats()).creates).toBe(stats.creates);
    } finally {
      await app.close();
    }
  });

  it('per IP: many users and numbers from one address are refused after the IP budget', async () => {
    const app = await mobileApp(join(dir, 'ip.sqlite'));
    try {
      let limitedAt = -1;
      for (let i = 0; i < 60 && limitedAt < 0; i++) {
        const answer = await app.start(`ipuser${i}`, `+1555777${String(i).padStart(4, '0')}`);
        if (answer.status === 429) limitedAt = i;
        else expect(answer.status).toBe(200);
      }
      expect(limitedAt).toBeGreaterThan(5); // more than the per-user / per-number budgets: it is the IP's
      expect(limitedAt).toBeLessThan(60);
      const stats = await emulator.control.stats();
      const rows = await app.attempts();
      expect(rows).toBe(limitedAt);
      await expectRefused(await app.start('ipuser-late', '+15557779999'));
      expect(await emulator.control.stats()).toMatchObject({ creates: stats.creates, smsSent: stats.smsSent });
      expect(await app.attempts()).toBe(rows);
    } finally {
      await app.close();
    }
  });
});
