/**
 * A new integrator's path, from the packed tarball, in scratch apps outside the repository:
 * - the tarball holds JavaScript, declarations and the docs only, and passes publint and "are the
 *   types wrong" for every entry;
 * - a SQLite app installed exactly as the README's "Install" section says runs the README's smallest
 *   complete app as copied (as `node server.mjs`, and through its `createApp` on the test clock: a
 *   walked verification and every audit check), the JavaScript example's and the sweep job's tests,
 *   both bin commands (`sweep --once` fulfils a closed tab, `emulator` serves), the integration audit
 *   against a small sound app, a CommonJS consumer, and type-checks a SQLite-only TypeScript file
 *   with skipLibCheck false; its production tree
 *   (`npm ls --omit=dev`) holds neither helmet nor @simplewebauthn/server;
 * - a PostgreSQL-only app installed as the README says has no better-sqlite3 at all, compiles the
 *   TypeScript example with skipLibCheck false and passes its tests; and where better-sqlite3 is
 *   installed, the main, postgres and testing entries still never load it;
 * - an existing Express 4 app that runs the README's SQLite install commands gets the kit with no
 *   flag and no peer warning, keeps its Express 4, passes every audit check, runs a step-up guarded
 *   page and form, and type-checks against @types/express 4;
 * - the README's smallest complete app, type-checked as JavaScript, has no error with @types/express
 *   5 nor 4.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import {
  AUDIT_CHECK_IDS,
  auditIntegration,
  createTestBrowser,
  createTestClock,
  failedIds,
  startEmulator,
  walkHostedPage,
  type RunningEmulator,
} from '../../testing/testing.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import {
  fencedBlock,
  installAsReadmeSays,
  installCommands,
  listed,
  pack,
  README,
  repoBin,
  ROOT,
  run,
} from './scratch.ts';

const CONSUMER = join(ROOT, 'test', 'package', 'consumer');

/** The README app's factory, as the copied server.mjs exports it. */
type CreateReadmeApp = (options: { env: Record<string, string>; now: () => number }) => {
  app: RequestListener;
  kit: { runSweep(): Promise<unknown>; close(): Promise<void>; serviceUrl?: string | undefined };
  store: { close(): Promise<void> | void };
};
/** Each test runs npm, tsc, attw or a child process: on a loaded 2-core machine that takes tens of seconds. */
const SLOW = 120_000;
const EXAMPLES = join(ROOT, 'examples');
/** The audit's step-up checks: the examples guard no route, so all but `step-up.action-start` are skipped there. */
const STEP_UP_CHECKS = AUDIT_CHECK_IDS.filter((id) => id.startsWith('step-up.')).length;
const CLIENT = { clientId: 'scratch-app', secret: 'scratch-app-secret-0123456789' };

/** The scratch app's audit-app.mjs: every check of the audit ran and passed. */
async function expectAuditPasses(appDir: string): Promise<void> {
  const { stdout } = await node(['audit-app.mjs'], appDir);
  const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
  expect(seen).toEqual({ ok: true, failed: [], notRun: [], counting: 'probe', checks: AUDIT_CHECK_IDS.length });
}

/** The scratch app's step-up-app.mjs: a verification opens the guarded page and a kept form runs once. */
async function expectStepUpRuns(appDir: string): Promise<void> {
  const { stdout } = await node(['step-up-app.mjs'], appDir);
  expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({
    pageOpened: true,
    createdBeforeConfirm: 0,
    confirmed: true,
    replayStatus: 409,
    created: [{ account: 'acct-1', name: 'ci' }],
    grants: ['api_keys', 'security'],
  });
}

/** The README's smallest app type-checked as JavaScript, beside what a TypeScript app declares itself. */
const README_APP_CHECK = ['readme-app-env.d.ts', 'tsconfig.readme.json'];

/** tsc's output on the README's smallest complete app, copied as `readme-app.mjs` into `appDir`. */
async function typeCheckReadmeApp(appDir: string): Promise<{ exitCode: number; stdout: string }> {
  writeFileSync(join(appDir, 'readme-app.mjs'), fencedBlock(README, 'The smallest complete app', 'js'));
  return run(repoBin('tsc'), ['-p', join(appDir, 'tsconfig.readme.json')], { cwd: appDir }).then(
    ({ stdout }) => ({ exitCode: 0, stdout }),
    (error: { stdout: string; code: number }) => ({ exitCode: error.code, stdout: error.stdout }),
  );
}

let work: string;
let tarball: string;
let files: string[];
/** Installed with the README's SQLite commands; holds the JavaScript example and the sweep job. */
let sqliteApp: string;
/** Installed with the README's PostgreSQL commands; is the TypeScript example. */
let postgresApp: string;
/** An app that already runs Express 4, then installed with the README's SQLite commands. */
let express4App: string;
/** What npm printed while installing the kit into the Express 4 app. */
let express4Install: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'verify-kit-package-'));
  ({ tarball, files } = await pack(work));
  sqliteApp = join(work, 'sqlite-app');
  postgresApp = join(work, 'postgres-app');
  express4App = join(work, 'express4-app');
  const sqliteCommands = installCommands(fencedBlock(README, 'With SQLite (one host)', 'sh'));
  await Promise.all([
    installAsReadmeSays(sqliteApp, tarball, sqliteCommands),
    installAsReadmeSays(express4App, tarball, sqliteCommands, {
      dependencies: { express: '^4.21.2' },
      devDependencies: { '@types/express': '^4.17.21' },
    }).then((printed) => (express4Install = printed)),
    installAsReadmeSays(
      postgresApp,
      tarball,
      installCommands(fencedBlock(README, 'With PostgreSQL (several instances)', 'sh')),
    ),
  ]);
  for (const name of [
    'cjs-app.cjs',
    'ts-consumer.ts',
    'tsconfig.json',
    'loads.mjs',
    'audit-app.mjs',
    'step-up-app.mjs',
    ...README_APP_CHECK,
  ]) {
    cpSync(join(CONSUMER, name), join(sqliteApp, name));
  }
  for (const name of [
    'ts-consumer.ts',
    'mount-app.ts',
    'tsconfig.json',
    'audit-app.mjs',
    'step-up-app.mjs',
    ...README_APP_CHECK,
  ]) {
    cpSync(join(CONSUMER, name), join(express4App, name));
  }
  writeFileSync(
    join(express4App, 'tsconfig.mount.json'),
    JSON.stringify({ extends: './tsconfig.json', files: ['ts-consumer.ts', 'mount-app.ts'] }),
  );
  cpSync(join(EXAMPLES, 'js-app'), join(sqliteApp, 'examples', 'js-app'), { recursive: true });
  cpSync(join(EXAMPLES, 'sweep-job'), join(sqliteApp, 'examples', 'sweep-job'), { recursive: true });
  for (const name of ['src', 'test', 'tsconfig.json']) {
    cpSync(join(EXAMPLES, 'ts-app', name), join(postgresApp, name), { recursive: true });
  }
}, 400_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

const node = (args: string[], cwd: string, env: Record<string, string> = {}) =>
  run(process.execPath, args, { cwd, timeout: 120_000, env: { ...process.env, ...env } }).catch(
    (error: { stdout: string; stderr: string; code: number }) => {
      throw new Error(`node ${args.join(' ')} exited ${error.code}:\n${error.stdout}\n${error.stderr}`);
    },
  );

describe('the packed tarball', { timeout: SLOW }, () => {
  it('holds JavaScript, declarations, the README and what it links (docs, SECURITY.md, examples), no sources, tests, demo, bench or images', () => {
    const unexpected = files.filter(
      (path) =>
        !/^dist\/.+\.(js|d\.ts)$/.test(path) &&
        !/^docs\/[a-z-]+\.md$/.test(path) &&
        !path.startsWith('examples/') &&
        !['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'SECURITY.md', 'emulator/README.md'].includes(path),
    );
    expect(unexpected).toEqual([]);
    expect(files).toEqual(
      expect.arrayContaining([
        'dist/middleware/index.js',
        'dist/middleware/index.d.ts',
        'dist/middleware/store/sqlite/sqlite.js',
        'dist/middleware/store/postgres/postgres.js',
        'dist/testing/testing.js',
        'dist/testing/testing.d.ts',
        'dist/cli/main.js',
        'LICENSE',
        'CHANGELOG.md',
        'README.md',
      ]),
    );
  });

  it('passes publint with no errors, warnings or suggestions', async () => {
    const { stdout } = await run(repoBin('publint'), ['run', tarball, '--strict']);
    expect(stdout).toContain('All good!');
  });

  it('passes "are the types wrong" for every entry point', async () => {
    // Profile esm-only, the two rules it skips being justified: the package is ESM-only with
    // engines node >=20.19, where (1) `node10` resolution (no `exports` support) is not a target,
    // and (2) a CommonJS `require()` of ESM works natively (the CommonJS consumer below proves it).
    const result = await run(repoBin('attw'), [tarball, '--profile', 'esm-only', '--format', 'json']).catch(
      (error: { stdout: string }) => error,
    );
    const analysis = JSON.parse(result.stdout) as {
      analysis: { problems: unknown[]; entrypoints: Record<string, unknown> };
    };
    expect(Object.keys(analysis.analysis.entrypoints).sort()).toEqual([
      '.',
      './package.json',
      './postgres',
      './sqlite',
      './testing',
    ]);
    const relevant = analysis.analysis.problems.filter(
      (problem) =>
        !['CJSResolvesToESM'].includes((problem as { kind: string }).kind) &&
        (problem as { resolutionKind?: string }).resolutionKind !== 'node10',
    );
    expect(relevant).toEqual([]);
  });
});

describe('a SQLite app installed as the README says', { timeout: SLOW }, () => {
  let emulator: RunningEmulator;
  let returnUrl: string;
  let port: number;
  /** The emulator's clock, which the README app's kit shares when a test gives it `now: clock.now`. */
  const clock = createTestClock();

  beforeAll(async () => {
    // One free port for the app each test runs, registered as the emulator's client's returnUrl.
    const probe = createServer();
    port = await new Promise<number>((resolve) =>
      probe.listen(0, '127.0.0.1', () => resolve((probe.address() as AddressInfo).port)),
    );
    await new Promise((resolve) => probe.close(resolve));
    returnUrl = `http://localhost:${port}/verify/return`;
    emulator = await startEmulator({ port: 0, clients: [{ ...CLIENT, returnUrl }], clock, log: () => {} });
  });
  afterAll(() => emulator?.close());

  const verifyEnv = () => ({
    VERIFY_BASE_URL: emulator.url,
    VERIFY_CLIENT_ID: CLIENT.clientId,
    VERIFY_CLIENT_SECRET: CLIENT.secret,
    VERIFY_RETURN_URL: returnUrl,
    SESSION_SECRET: 'a-scratch-session-secret',
  });

  it('its production tree holds neither helmet nor @simplewebauthn/server, which it has as devDependencies', async () => {
    const all = await listed(sqliteApp);
    expect(all).toEqual(
      expect.arrayContaining(['helmet', '@simplewebauthn/server', 'better-sqlite3', 'express-session']),
    );
    const production = await listed(sqliteApp, '--omit=dev');
    expect(production).toEqual(expect.arrayContaining(['hosted-sms-verify-kit', 'express', 'better-sqlite3']));
    expect(production.filter((name) => name === 'helmet' || name.startsWith('@simplewebauthn/'))).toEqual([]);
  });

  it("runs the README's smallest complete app as copied: `node server.mjs` serves it; its createApp, on the test clock, fulfils a walked verification once and passes every audit check", async () => {
    const snippet = fencedBlock(README, 'The smallest complete app', 'js');
    expect(snippet.trimEnd().split('\n').length).toBeLessThanOrEqual(45); // one screen
    const serverFile = join(sqliteApp, 'server.mjs');
    writeFileSync(serverFile, snippet);
    const databasePath = join(sqliteApp, 'app.sqlite');
    const origin = `http://localhost:${port}`;

    // As a reader runs it.
    const child = spawn(process.execPath, ['server.mjs'], {
      cwd: sqliteApp,
      env: { ...process.env, ...verifyEnv(), PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const home = await retry(() => fetch(`${origin}/`), output);
      expect(home.status).toBe(200);
      expect(await home.text()).toContain('<form method="post" action="/login">');
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      if (child.exitCode === null) await exited;
    }
    expect(output).not.toContain(CLIENT.secret);

    // As the reader's tests run it: createApp with the emulator's values and the clock it shares with it.
    const { createApp } = (await import(pathToFileURL(serverFile).href)) as { createApp: CreateReadmeApp };
    const logs: string[] = [];
    // The kit's default logger is silent under NODE_ENV=test: here its lines go to the audit's leak check.
    vi.stubEnv('VERIFY_KIT_LOG', 'console');
    const consoleError = vi.spyOn(console, 'error').mockImplementation((...line: unknown[]) => {
      logs.push(line.map(String).join(' '));
    });
    const server = createServer();
    let readme: ReturnType<CreateReadmeApp> | undefined;
    const effects = (sessionId: string) => {
      const db = new BetterSqlite3(databasePath, { readonly: true });
      try {
        return (
          db.prepare('SELECT count(*) AS n FROM verified_phones WHERE session_id = ?').get(sessionId) as { n: number }
        ).n;
      } finally {
        db.close();
      }
    };
    try {
      readme = createApp({ env: { ...verifyEnv(), DATABASE_PATH: databasePath }, now: clock.now });
      server.on('request', readme.app);
      await new Promise<void>((resolve) => server.listen(port, resolve));
      const { kit } = readme;
      const browser = createTestBrowser();
      await browser.post(`${origin}/login`, { user: 'ada', phone: '+15550100009' }, origin);
      const home = await browser.get(`${origin}/`);
      const walked = await walkHostedPage(await browser.submitForm(home, {}, { action: '/verify/start' }), {
        emulator,
        browser,
      });
      const landing = await browser.get(walked.landingUrl);
      expect(landing.location).toBe(`${origin}/done`);
      expect((await browser.get(landing.location!)).html).toBe('Phone number confirmed.');
      expect((await browser.get(`${origin}/done`)).html).toBe('Nothing to show.'); // the flash is read once
      expect(effects(walked.sessionId)).toBe(1);
      await expectSignInStartsNewSession(origin);

      let user = 0;
      const report = await auditIntegration({
        appUrl: origin,
        emulatorUrl: emulator.url,
        clientId: CLIENT.clientId,
        clientSecret: CLIENT.secret,
        signIn: {
          path: '/',
          action: '/login',
          fields: (name) => ({ user: name, phone: `+1555020${String(++user).padStart(4, '0')}` }),
        },
        actions: [{ name: 'confirm_phone' }],
        probe: effects,
        kit,
        logs: () => logs,
        sweep: { run: () => kit.runSweep(), clock },
      });
      expect(report.checks.map((check) => check.id).sort()).toEqual([...AUDIT_CHECK_IDS].sort());
      expect(failedIds(report)).toEqual([]);
      expect(logs.length).toBeGreaterThan(0);

      // The sign-in keeps the number in E.164, as the kit texts it: a national number (which names no
      // country, so every start would be refused) is refused there and signs nobody in; one written
      // with separators is kept and texted.
      const national = createTestBrowser();
      const refused = await national.post(`${origin}/login`, { user: 'nat', phone: '07400 123456' }, origin);
      expect(refused.status).toBe(422);
      expect((await national.get(`${origin}/`)).html).toContain('<form method="post" action="/login">');
      const spaced = createTestBrowser();
      await spaced.post(`${origin}/login`, { user: 'gb', phone: '+44 7400 123456' }, origin);
      const started = await spaced.submitForm(await spaced.get(`${origin}/`), {}, { action: '/verify/start' });
      expect(started.status).toBe(200);
    } finally {
      consoleError.mockRestore();
      vi.unstubAllEnvs();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await readme?.kit.close();
      await readme?.store.close();
      clock.reset();
    }
  });

  it('the integration audit runs from the tarball against a small sound app and passes every check', async () => {
    await expectAuditPasses(sqliteApp);
  });

  it('the step-up guard runs from the tarball in a JavaScript app: verifyStepUp opens the page, a kept form runs once', async () => {
    await expectStepUpRuns(sqliteApp);
  });

  it("passes the JavaScript example's tests (its integration audit included, one case per check) and the sweep job's (`node --test`, with only the public testing entry)", async () => {
    const app = await node(['--test'], join(sqliteApp, 'examples', 'js-app'));
    // Its thirteen tests, and every check but the step-up ones of guarded routes: it guards no route of
    // its own (no `stepUp`), so those are skipped, with the reason; its change of number's start is.
    expect(app.stdout).toMatch(new RegExp(`# pass ${13 + AUDIT_CHECK_IDS.length - STEP_UP_CHECKS}\\n# fail 0`));
    expect(app.stdout).toMatch(new RegExp(`# skipped ${STEP_UP_CHECKS - 1}\\n`));
    const job = await node(['--test'], join(sqliteApp, 'examples', 'sweep-job'));
    expect(job.stdout).toMatch(/# pass 2\n# fail 0/);
  });

  it('a CommonJS file require()s the package and its ./sqlite and ./testing entries, whose surface holds no internals', async () => {
    const { stdout } = await node(['cjs-app.cjs'], sqliteApp);
    expect(JSON.parse(stdout.trim())).toEqual({
      createVerificationKit: 'function',
      createSqliteStore: 'function',
      runSweepJob: 'function',
      internalsExported: [],
      kitErrorCodes: expect.any(Number),
      startEmulator: 'function',
      emulatorControl: 'function',
    });
  });

  it('a SQLite-only TypeScript project (node16, skipLibCheck false, no pg installed) type-checks against the declarations', async () => {
    expect(await listed(sqliteApp)).not.toContain('pg');
    expect(await listed(sqliteApp)).not.toContain('@types/pg');
    const result = await run(repoBin('tsc'), ['-p', join(sqliteApp, 'tsconfig.json')], { cwd: sqliteApp }).then(
      ({ stdout }) => ({ exitCode: 0, stdout }),
      (error: { stdout: string; code: number }) => ({ exitCode: error.code, stdout: error.stdout }),
    );
    expect(result).toEqual({ exitCode: 0, stdout: '' });
  });

  it("the README's smallest complete app type-checks (checkJs, strict, skipLibCheck false) with @types/express 5", async () => {
    expect(JSON.parse((await run('npm', ['ls', '--json', '@types/express'], { cwd: sqliteApp })).stdout)).toMatchObject(
      {
        dependencies: { '@types/express': { version: expect.stringMatching(/^5\./) } },
      },
    );
    expect(await typeCheckReadmeApp(sqliteApp)).toEqual({ exitCode: 0, stdout: '' });
  });

  it('the main, ./postgres and ./testing entries never load better-sqlite3, though it is installed; ./sqlite does', async () => {
    const loads = async (entries: string) =>
      JSON.parse((await node(['loads.mjs', entries], sqliteApp)).stdout) as { betterSqlite3Loaded: boolean };
    expect(await loads('hosted-sms-verify-kit,hosted-sms-verify-kit/postgres,hosted-sms-verify-kit/testing')).toEqual({
      betterSqlite3Loaded: false,
    });
    // The control: the same check sees the SQLite entry load it.
    expect(await loads('hosted-sms-verify-kit/sqlite')).toEqual({ betterSqlite3Loaded: true });
  });

  it('the bin: `sweep --once --config` fulfils a verification whose tab was closed, once', async () => {
    const databasePath = join(work, 'bin-sweep.sqlite');
    const env = { ...verifyEnv(), DATABASE_PATH: databasePath };
    // The example app started the verification three minutes ago (its clock is behind), and the
    // user closed the tab after entering the code: the bin's sweep finds it due now.
    const started = await node(['--input-type=module', '-e', startedThreeMinutesAgo()], sqliteApp, env);
    const { sessionId } = JSON.parse(lineWith(started.stdout, '"sessionId"')) as { sessionId: string };
    // Asynchronously: the emulator it reads from runs in this process.
    const sweep = await run(
      join(sqliteApp, 'node_modules', '.bin', 'hosted-sms-verify-kit'),
      ['sweep', '--once', '--config', './examples/js-app/verify.config.js'],
      { cwd: sqliteApp, env: { ...process.env, ...env }, timeout: 60_000 },
    ).then(
      ({ stdout, stderr }) => ({ status: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ status: error.code, ...error }),
    );
    expect(sweep.status, sweep.stdout + sweep.stderr).toBe(0);
    expect(JSON.parse(lineWith(sweep.stdout, '"event":"sweep"'))).toMatchObject({
      event: 'sweep',
      mode: 'once',
      fulfilled: 1,
    });
    expect(sweep.stdout + sweep.stderr).not.toContain(CLIENT.secret);
    const confirmed = await node(
      [
        '-e',
        `const D=require('better-sqlite3');console.log(JSON.stringify(new D(process.argv[1]).prepare('SELECT session_id FROM phone_confirmations').all()))`,
        databasePath,
      ],
      sqliteApp,
    );
    expect(JSON.parse(confirmed.stdout)).toEqual([{ session_id: sessionId }]);
  });

  it('the bin: `emulator --port 0 --clients FILE` serves the registered client, never prints its secret, stops on SIGTERM', async () => {
    const clients = join(work, 'clients.json');
    writeFileSync(clients, JSON.stringify([{ ...CLIENT, returnUrl }]));
    const child = spawn(
      join(sqliteApp, 'node_modules', '.bin', 'hosted-sms-verify-kit'),
      ['emulator', '--port', '0', '--clients', clients],
      {
        cwd: sqliteApp,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const url = await retry(async () => {
      const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      if (found === undefined || !output.includes('Press Ctrl+C')) throw new Error('no banner yet');
      return found;
    }, output);
    const created = await fetch(`${url}/session`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${CLIENT.clientId}:${CLIENT.secret}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        returnUrl,
        channel: 'sms',
        destination: '+15550100001',
        operationSensitivity: 'normal',
        userRef: 'u1',
        state: 's1',
      }),
    });
    expect(created.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain(`client ${CLIENT.clientId}`);
    expect(output).not.toContain(CLIENT.secret);
  });

  it('without helmet and @simplewebauthn/server, startEmulator says which devDependencies to install', async () => {
    const bare = join(work, 'bare-app');
    const installed = join(bare, 'node_modules', 'hosted-sms-verify-kit');
    mkdirSync(installed, { recursive: true });
    await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
    // Express and the package's own dependencies, as any install holds them; not its devDependencies.
    const { dependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    for (const name of ['express', ...Object.keys(dependencies)]) {
      mkdirSync(dirname(join(bare, 'node_modules', name)), { recursive: true });
      symlinkSync(join(sqliteApp, 'node_modules', name), join(bare, 'node_modules', name), 'dir');
    }
    writeFileSync(join(bare, 'package.json'), '{"type":"module"}');
    const script = `import { startEmulator } from 'hosted-sms-verify-kit/testing';
      await startEmulator({ port: 0 }).then(() => console.log('started'), (error) => console.log(error.message));`;
    const { stdout } = await node(['--input-type=module', '-e', script], bare);
    expect(stdout.trim()).toBe(
      'The emulator needs helmet, which your app installs as devDependencies: npm install --save-dev helmet @simplewebauthn/server',
    );
  });
});

describe("an Express 4 app that adds the kit with the README's SQLite commands", { timeout: SLOW }, () => {
  it('installs with no flag and no peer warning, and keeps its Express 4 and @types/express 4', async () => {
    expect(express4Install).toContain('$ npm install hosted-sms-verify-kit');
    expect(express4Install).not.toMatch(/peer|ERESOLVE|legacy/i);
    const versions = JSON.parse(
      (await run('npm', ['ls', '--all', '--json', 'express', '@types/express'], { cwd: express4App })).stdout,
    ) as { dependencies: Record<string, { version: string }> };
    expect(versions.dependencies.express?.version).toMatch(/^4\./);
    expect(versions.dependencies['@types/express']?.version).toMatch(/^4\./);
    // No second Express anywhere in the tree: the kit runs on the app's own.
    expect((await listed(express4App)).filter((name) => name === 'express')).toEqual(['express']);
  });

  it('the integration audit passes every check against a small sound Express 4 app', async () => {
    await expectAuditPasses(express4App);
  });

  it('the step-up guard opens a page after a verification and runs a kept form once', async () => {
    await expectStepUpRuns(express4App);
  });

  it('TypeScript files mounting the router and a guard (skipLibCheck false) type-check with @types/express 4', async () => {
    const result = await run(repoBin('tsc'), ['-p', join(express4App, 'tsconfig.mount.json')], {
      cwd: express4App,
    }).then(
      ({ stdout }) => ({ exitCode: 0, stdout }),
      (error: { stdout: string; code: number }) => ({ exitCode: error.code, stdout: error.stdout }),
    );
    expect(result).toEqual({ exitCode: 0, stdout: '' });
  });

  it("the README's smallest complete app type-checks (checkJs, strict, skipLibCheck false) with @types/express 4", async () => {
    expect(await typeCheckReadmeApp(express4App)).toEqual({ exitCode: 0, stdout: '' });
  });
});

describe.skipIf(postgresUnavailable !== undefined)(
  'a PostgreSQL-only app installed as the README says',
  { timeout: SLOW },
  () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase({ max: 2 });
    });
    afterAll(() => database?.drop());

    it('has no better-sqlite3 at all, and the TypeScript example compiles with skipLibCheck false and passes its tests', async () => {
      const all = await listed(postgresApp);
      expect(all).toEqual(expect.arrayContaining(['hosted-sms-verify-kit', 'pg', '@types/pg']));
      expect(all.filter((name) => name.includes('sqlite'))).toEqual([]);
      expect(JSON.parse(readFileSync(join(postgresApp, 'tsconfig.json'), 'utf8')).compilerOptions.skipLibCheck).toBe(
        false,
      );
      const compiled = await run(repoBin('tsc'), ['-p', postgresApp], { cwd: postgresApp }).then(
        ({ stdout }) => stdout,
        (error: { stdout: string }) => error.stdout,
      );
      expect(compiled).toBe('');
      const tests = await node(['--test', 'dist/test/'], postgresApp, { DATABASE_URL: database.url });
      // No guarded route: those checks are skipped, with the reason, but for the change of number's
      // start; the typed-number ones run on PostgreSQL.
      const skipped = STEP_UP_CHECKS - 1;
      // Its ten tests besides the audit's.
      expect(tests.stdout).toMatch(new RegExp(`# pass ${10 + AUDIT_CHECK_IDS.length - skipped}\\n# fail 0`));
      expect(tests.stdout).toMatch(new RegExp(`# skipped ${skipped}\\n`));
    });
  },
);

/**
 * A cookie an attacker planted before the sign-in (here their own signed-in session's) is not the
 * victim's signed-in session after it: the README app's /login gives the browser a new session.
 */
async function expectSignInStartsNewSession(origin: string): Promise<void> {
  const login = (user: string, cookie?: string) =>
    fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie === undefined ? {} : { cookie }) },
      body: new URLSearchParams({ user, phone: '+15550100008' }),
    });
  const sessionCookie = (answer: Response) => answer.headers.getSetCookie()[0]?.split(';')[0];
  const planted = sessionCookie(await login('mallory'));
  expect(planted).toBeDefined();
  expect((await login('victim', planted)).status).toBe(303);
  // Signed out on the planted cookie: the home page is the sign-in form again.
  const home = await fetch(`${origin}/`, { headers: { cookie: planted! } });
  expect(await home.text()).toContain('<form method="post" action="/login">');
}

/** The last output line holding `marker` (the kit may print its own log lines beside it). */
function lineWith(output: string, marker: string): string {
  const line = output.split('\n').findLast((candidate) => candidate.includes(marker));
  if (line === undefined) throw new Error(`no line with ${marker} in:\n${output}`);
  return line;
}

/** Retries `attempt` for up to 20 s (a child process starting); the error names what it printed. */
async function retry<T>(attempt: () => Promise<T>, output: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`gave up: ${String(error)}\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/**
 * A script (run in the SQLite app) that starts a verification in the JavaScript example with its
 * clock three minutes behind, goes through the hosted page and never lands: prints the session id.
 */
function startedThreeMinutesAgo(): string {
  return `
    import { createServer } from 'node:http';
    import { createTestBrowser, emulatorControl, walkHostedPage } from 'hosted-sms-verify-kit/testing';
    import { createApp } from './examples/js-app/app.js';
    const app = createApp({ now: () => Date.now() - 181_000 });
    const server = createServer(app);
    await new Promise((resolve) => server.listen(Number(new URL(process.env.VERIFY_RETURN_URL).port), '127.0.0.1', resolve));
    const origin = new URL(process.env.VERIFY_RETURN_URL).origin;
    const browser = createTestBrowser();
    const signedIn = await browser.submitForm(await browser.get(origin + '/'), { user: 'alice' });
    const started = await browser.submitForm(await browser.get(signedIn.location), {}, { action: '/verify/start' });
    const walked = await walkHostedPage(started, { emulator: { control: emulatorControl(process.env.VERIFY_BASE_URL) }, browser });
    console.log(JSON.stringify({ sessionId: walked.sessionId }));
    await app.locals.close();
    server.closeAllConnections();
    server.close();
  `;
}
