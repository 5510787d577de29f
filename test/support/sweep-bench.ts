/**
 * Shared set-up of the sweep suites: a real emulator on loopback, the real client, a SQLite file
 * with the kit's store and a test action whose fulfil writes one row in its own table (in the
 * kit's transaction), and attempts created as real sessions in the emulator.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { afterEach } from 'vitest';
import { sweepProcessOnBuiltKit } from './built.ts';
import { dueAttempt } from './due-attempt.ts';
import { useTestEmulator, type TestEmulator } from './emulator.ts';
import { createVerifyClient } from '../../middleware/client/client.ts';
import { createSqliteStore, type SqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import type { Attempt, VerifyStore } from '../../middleware/store/types.ts';
import type { StoreUnderTest } from './stores.ts';
import type { ActionDefinition, VerifyClient } from '../../middleware/types.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import type { SweepDeps } from '../../middleware/sweep/sweep-report.ts';
import type { SweepJobKit } from '../../middleware/sweep/sweep-job.ts';
import { startSweepWorker } from '../../middleware/sweep/worker.ts';

export const CLIENT_ID = 'demo-client';
export const CLIENT_SECRET = 'demo-secret-change-me';
export const RETURN_URL = 'http://localhost:3000/verify/return';
export const ACTION = 'sweep_grant';
export const DAY_MS = 24 * 60 * 60 * 1000;

/** The test action: one row per fulfilment in `sweep_effects`, written inside the kit's transaction. */
export function effectsTable(db: Database): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS sweep_effects (session_id TEXT NOT NULL, state TEXT NOT NULL, user_ref TEXT NOT NULL, by TEXT NOT NULL)',
  );
}

export function grantAction(by: string): ActionDefinition<Database> {
  return {
    name: ACTION,
    operationSensitivity: 'normal',
    successPath: '/done',
    fulfil(tx, attempt) {
      tx.prepare('INSERT INTO sweep_effects (session_id, state, user_ref, by) VALUES (?, ?, ?, ?)').run(
        attempt.sessionId,
        attempt.state,
        attempt.userRef,
        by,
      );
    },
  };
}

export function countEffects(db: Database): number {
  return (db.prepare('SELECT count(*) AS n FROM sweep_effects').get() as { n: number }).n;
}

/** Sessions fulfilled more than once (must always be empty). */
export function duplicateEffects(db: Database): { session_id: string; n: number }[] {
  return db.prepare('SELECT session_id, count(*) AS n FROM sweep_effects GROUP BY session_id HAVING n > 1').all() as {
    session_id: string;
    n: number;
  }[];
}

/** The suite's emulator with the sweep's client registered (attempts are created as real sessions in it). */
export function useSweepEmulator(): TestEmulator {
  return useTestEmulator({ clients: [{ clientId: CLIENT_ID, secret: CLIENT_SECRET, returnUrl: RETURN_URL }] });
}

/** The sweep's action over a store under test: one `effects` row per fulfilment, in the store's transaction. */
export function sweepDeps(h: StoreUnderTest, store: VerifyStore<unknown>, verifyClient: VerifyClient, by: string) {
  const effect = h.effect(by);
  const action: ActionDefinition<unknown> = {
    name: ACTION,
    operationSensitivity: 'normal',
    successPath: '/done',
    fulfil: (tx, attempt) => effect(tx, attempt as never),
  };
  // Ten minutes on: every attempt is due.
  const deps: SweepDeps<unknown> = {
    client: verifyClient,
    store,
    actions: new Map([[ACTION, action]]),
    now: () => Date.now() + 10 * 60_000,
  };
  return deps;
}

/** `n` verified sessions in the emulator, each with its pending attempt in the store. */
export async function verifiedAttempts(
  emu: TestEmulator,
  store: VerifyStore<unknown>,
  verifyClient: VerifyClient,
  n: number,
) {
  for (let i = 0; i < n; i++) {
    const state = randomBytes(16).toString('base64url');
    const userRef = `user-${randomBytes(4).toString('hex')}`;
    const input = { returnUrl: RETURN_URL, destination: '+15550100001', userRef, state, platform: 'web' as const };
    const session = await verifyClient.createSession({ ...input, operationSensitivity: 'normal' }, `k-${state}`);
    await store.insertAttempt(dueAttempt({ ...input, sessionId: session.sessionId, action: ACTION }));
    await emu.control.completeSession(session.sessionId, 'verified');
  }
}

export function client(url: string, overrides: { headersMs?: number; statusReadAttempts?: number } = {}): VerifyClient {
  return createVerifyClient({
    baseUrl: url,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    timeouts: { connectMs: 2000, headersMs: overrides.headersMs ?? 5000, bodyMs: 5000 },
    retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 50, budgetMs: 2000 },
    statusReadAttempts: overrides.statusReadAttempts ?? 2,
  });
}

/**
 * What the sweep job uses of a kit, over bare sweep deps (the kit's own methods do the same over
 * its context); close() closes the client when it can, as a kit closes the client it built.
 */
export function jobKit<Tx>(deps: SweepDeps<Tx> & { client: Partial<Pick<VerifyClient, 'close'>> }): SweepJobKit<Tx> {
  return {
    store: deps.store,
    runSweep: (options) => runSweep(deps, options),
    startSweepWorker: (options) => startSweepWorker(deps, options),
    close: async () => {
      await deps.client.close?.();
    },
  };
}

export interface Bench {
  dir: string;
  path: string;
  store: SqliteStore;
  client: VerifyClient;
  deps: SweepDeps<Database>;
  /**
   * Creates `n` real sessions in the emulator and the matching attempts, due at `createdAt`.
   * `storedUserRef` stores the attempts for another user than the sessions were created for: the
   * service then echoes a userRef that is not the stored one.
   */
  createAttempts(
    n: number,
    options?: { createdAt?: number; nextCheckAt?: number; storedUserRef?: string },
  ): Promise<Attempt[]>;
  attempt(state: string): Promise<Attempt>;
  /** Closes the client and the store and removes the file; a second call does nothing. */
  close(): Promise<void>;
}

/** A SQLite file + store + client against `emulatorUrl`; `now` is what the sweep sees. */
async function bench(
  emulatorUrl: string,
  now: () => number = Date.now,
  clientOptions?: Parameters<typeof client>[1],
): Promise<Bench> {
  const dir = mkdtempSync(join(tmpdir(), 'verify-sweep-'));
  const path = join(dir, 'kit.sqlite');
  const store = createSqliteStore({ database: path });
  effectsTable(store.db);
  const verifyClient = client(emulatorUrl, clientOptions);
  const deps: SweepDeps<Database> = {
    client: verifyClient,
    clientId: CLIENT_ID,
    store,
    actions: new Map([[ACTION, grantAction('in-process')]]),
    now,
  };
  return {
    dir,
    path,
    store,
    client: verifyClient,
    deps,
    async createAttempts(n, options = {}) {
      const created: Attempt[] = [];
      const createdAt = options.createdAt ?? now();
      // A few at a time: the emulator is real HTTP.
      for (let i = 0; i < n; i += 10) {
        const chunk = await Promise.all(
          Array.from({ length: Math.min(10, n - i) }, async () => {
            const state = randomBytes(16).toString('base64url');
            const userRef = `user-${randomBytes(4).toString('hex')}`;
            const session = await verifyClient.createSession(
              {
                returnUrl: RETURN_URL,
                destination: '+15550100001',
                operationSensitivity: 'normal',
                userRef,
                state,
                platform: 'web',
              },
              `key-${state}`,
            );
            await store.insertAttempt({
              state,
              sessionId: session.sessionId,
              userRef: options.storedUserRef ?? userRef,
              action: ACTION,
              params: { grant: 'premium' },
              destination: '+15550100001',
              returnTo: '/done',
              sensitivity: 'normal',
              platform: 'web',
              clientId: CLIENT_ID,
              createdAt,
              nextCheckAt: options.nextCheckAt ?? createdAt,
            });
            return (await store.findAttemptByState(state))!;
          }),
        );
        created.push(...chunk);
      }
      return created;
    },
    async attempt(state) {
      const found = await store.findAttemptByState(state);
      if (found === undefined) throw new Error(`no attempt ${state}`);
      return found;
    },
    close: once(async () => {
      await verifyClient.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }),
  };
}

function once(work: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= work());
}

/**
 * The suite's emulator and the benches its tests open: after each test, once the file's own
 * after-hooks have stopped what used them (vitest runs after-hooks last registered first), every
 * bench the test opened is closed and the emulator reset.
 */
export function useSweepBench(): {
  emu: TestEmulator;
  openBench: (now?: () => number, clientOptions?: Parameters<typeof client>[1]) => Promise<Bench>;
} {
  const emu = useSweepEmulator();
  const opened: Bench[] = [];
  afterEach(async () => {
    for (const b of opened.splice(0)) await b.close();
    await emu.control.reset();
  });
  return {
    emu,
    async openBench(now, clientOptions) {
      const b = await bench(emu.url, now, clientOptions);
      opened.push(b);
      return b;
    },
  };
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const children: ChildProcess[] = [];

export interface SweepProcess {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

/**
 * Spawns the sweep job fixture as a real process (plain node on the package as built: needs `npm
 * run build`, as npm test does first), with only `env` (and PATH).
 * It keeps the test's CPU priority unless `env` sets SWEEP_NICE: under a loaded test run a job at
 * its default priority (10) would wait behind every test worker.
 */
export function spawnSweepProcess(args: string[], env: Record<string, string>): SweepProcess {
  const child = spawn(process.execPath, [sweepProcessOnBuiltKit(), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', SWEEP_NICE: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

/** SIGKILLs every fixture process this file started that is still running. */
export function killSweepProcesses(): void {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

export const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
