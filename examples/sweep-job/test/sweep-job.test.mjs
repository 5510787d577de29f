// The sweep job of ../js-app, as `hosted-sms-verify-kit sweep --once --config ./verify.config.js`
// runs it (runSweepJob on a kit built from the same configuration, serving no route), with only the
// kit's public entries and its `testing` entry. The job's kit takes the clock the test shares with
// the emulator, so the first check is reached without sleeping.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createVerificationKit, runSweepJob } from 'hosted-sms-verify-kit';
import { createTestBrowser, createTestClock, startEmulator, walkHostedPage } from 'hosted-sms-verify-kit/testing';
import { createApp } from '../../js-app/app.js';
import verificationOptions from '../../js-app/verify.config.js';

const CLIENT = { clientId: 'example-job', secret: 'example-job-secret-0123456789' };
const dir = mkdtempSync(join(tmpdir(), 'verify-sweep-example-'));
const server = createServer();
const clock = createTestClock();
let origin;
let env;
let emulator;
let app;

before(async () => {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://localhost:${server.address().port}`;
  const returnUrl = `${origin}/verify/return`;
  emulator = await startEmulator({ port: 0, clients: [{ ...CLIENT, returnUrl }], clock, log: () => {} });
  env = {
    VERIFY_BASE_URL: emulator.url,
    VERIFY_CLIENT_ID: CLIENT.clientId,
    VERIFY_CLIENT_SECRET: CLIENT.secret,
    VERIFY_RETURN_URL: returnUrl,
    DATABASE_PATH: join(dir, 'app.sqlite'),
    SESSION_SECRET: 'a-test-session-secret',
  };
  app = createApp({ env, now: clock.now });
  server.on('request', app);
});
after(async () => {
  await app.locals.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One `sweep --once` run: checks its exit code and returns its JSON line. */
async function sweepOnce() {
  const options = verificationOptions(env);
  const kit = createVerificationKit({ ...options, now: clock.now, routes: { start: false, landing: false } });
  const lines = [];
  try {
    const exitCode = await runSweepJob({ kit, argv: ['--once'], env, print: (line) => lines.push(line) });
    assert.equal(exitCode, 0, lines.join('\n'));
    return JSON.parse(lines.at(-1));
  } finally {
    await kit.close();
    await options.store.close();
  }
}

async function verifiedButClosed(browser) {
  const signedIn = await browser.submitForm(await browser.get(`${origin}/`), { user: 'alice' });
  const started = await browser.submitForm(await browser.get(signedIn.location), {}, { action: '/verify/start' });
  return walkHostedPage(started, { emulator, browser });
}
const confirmations = async (browser) => JSON.parse((await browser.get(`${origin}/me`)).html).confirmations;

test('a closed tab is fulfilled by the job once the shared clock passes the first check; landing later fulfils nothing more', async () => {
  const browser = createTestBrowser();
  const walked = await verifiedButClosed(browser);
  assert.equal((await sweepOnce()).claimed, 0); // not due yet

  clock.advance({ seconds: 181 });
  assert.equal((await sweepOnce()).fulfilled, 1);
  assert.deepEqual(await confirmations(browser), [{ sessionId: walked.sessionId, phone: '••\u00a001' }]);

  const landing = await browser.get(walked.landingUrl);
  assert.equal(landing.location, `${origin}/done`);
  assert.equal((await confirmations(browser)).length, 1);
  assert.equal((await sweepOnce()).fulfilled, 0);
});

test('a landing fulfils once, a reload nothing more, and the job then finds nothing to fulfil', async () => {
  const browser = createTestBrowser();
  const walked = await verifiedButClosed(browser);
  const before = (await confirmations(browser)).length;
  await browser.get(walked.landingUrl);
  await browser.get(walked.landingUrl);
  assert.equal((await confirmations(browser)).length, before + 1);
  clock.advance({ seconds: 181 });
  assert.equal((await sweepOnce()).fulfilled, 0);
  assert.equal((await confirmations(browser)).length, before + 1);
});
