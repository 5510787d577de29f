/**
 * Each status read is paid for and counts against the service's limit. A read the service answered
 * with something the kit cannot use (a status it does not know, a body that is not JSON) waits for
 * the attempt's schedule: asked again, the service gives the same answer. Before, it was read again
 * every 30 s (`errorRetryMs`) for the whole day, some 2,800 reads instead of 16. A read the service
 * did not answer (a 503, a connection lost mid-body) is still read again after `errorRetryMs`.
 * Simulated day on the test clock, against a service on loopback; same suite on every store.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SWEEP_WINDOW_MS } from '../../middleware/sweep/sweep-options.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import type { SweepDeps } from '../../middleware/sweep/sweep-report.ts';
import type { ActionDefinition, VerifyClient } from '../../middleware/types.ts';
import { describeEachStore } from '../support/stores.ts';
import { ACTION, client, useSweepEmulator } from '../support/sweep-bench.ts';
import { insertDueAttempt, MIN, READ_AGES, sweepEachDueTime } from '../support/sweep-day.ts';
import { useSweepSuite } from '../support/sweep-suite.ts';

const SEC = 1000;
const ERROR_RETRY_MS = 20 * SEC;

/** How the service answers each session's reads, by the read's number (0 the first). */
const ANSWERS: Record<string, (res: ServerResponse, read: number) => void> = {
  // Well-formed, but a status the kit does not know: a service_protocol_error.
  'unknown-status': (res) => json(res, 200, { status: 'expired' }),
  // A page that is not the service's JSON: a service_protocol_error.
  'not-json': (res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
  },
  // No answer twice (service_unavailable), then pending.
  down: (res, read) => (read < 2 ? json(res, 503, {}) : json(res, 200, { status: 'pending' })),
  // The connection lost mid-body once (service_unavailable: undici sees the body end short), then pending.
  'cut-short': (res, read) => {
    if (read > 0) return json(res, 200, { status: 'pending' });
    res.socket?.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"status":"pe');
  },
};

function json(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const emu = useSweepEmulator();
let now = 0;
/** Each session's reads, as the attempt's age when the service got them. */
const readAges = new Map<string, number[]>();
let createdAt = 0;
let service: Server;
let serviceClient: VerifyClient;

beforeAll(async () => {
  service = createServer((req: IncomingMessage, res: ServerResponse) => {
    const id = decodeURIComponent(req.url?.split('/').pop() ?? '');
    const ages = readAges.get(id) ?? [];
    readAges.set(id, [...ages, now - createdAt]);
    ANSWERS[id]!(res, ages.length);
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  // One try a read: every read the service gets is one the sweep made.
  serviceClient = client(`http://127.0.0.1:${(service.address() as AddressInfo).port}`, { statusReadAttempts: 1 });
});

afterAll(async () => {
  await serviceClient.close();
  await new Promise((resolve) => service.close(resolve));
});

describeEachStore('answers the kit cannot use, and no answer', (kind) => {
  const suite = useSweepSuite(emu, kind);

  it('reads an attempt answered unusably on its schedule over a day, and one not answered again after errorRetryMs', async () => {
    const h = await suite.open();
    readAges.clear();
    createdAt = Date.now();
    now = createdAt;
    const states = new Map<string, string>();
    for (const sessionId of Object.keys(ANSWERS)) {
      states.set(sessionId, await insertDueAttempt(h.store, sessionId, createdAt));
    }
    const action: ActionDefinition<unknown> = {
      name: ACTION,
      operationSensitivity: 'normal',
      successPath: '/done',
      fulfil() {},
    };
    const logged: { level: string; sessionId: string; nextCheckAt: number }[] = [];
    const record = (level: string) => (fields: unknown) => {
      const { sessionId, nextCheckAt } = fields as { sessionId?: string; nextCheckAt?: number };
      if (sessionId !== undefined && nextCheckAt !== undefined) logged.push({ level, sessionId, nextCheckAt });
    };
    const logger = { info: () => {}, warn: record('warn'), error: record('error') };
    const deps: SweepDeps<unknown> = {
      client: serviceClient,
      store: h.store,
      actions: new Map([[ACTION, action]]),
      now: () => now,
      logger,
    };
    const nextDue = async () => {
      const stored = await Promise.all([...states.values()].map((state) => h.store.findAttemptByState(state)));
      return Math.min(...stored.map((attempt) => attempt!.nextCheckAt));
    };

    // The first run: all four fail, each counted as an error.
    now = createdAt + 3 * MIN;
    expect(await runSweep(deps, { errorRetryMs: ERROR_RETRY_MS })).toMatchObject({ reads: 4, errors: 4, pending: 0 });
    const firstRunLog = logged.splice(0);

    // The rest of the day, each run at the next time an attempt is due (at most 40 runs: the
    // schedule needs 17; before, a read every 20 s would have needed thousands).
    await sweepEachDueTime({
      nextDue,
      end: createdAt + SWEEP_WINDOW_MS,
      setNow: (due) => (now = due),
      sweep: () => runSweep(deps, { errorRetryMs: ERROR_RETRY_MS }),
      most: 40,
    });
    // The reads each attempt cost over its day: 16 on the schedule, and the retries of the unanswered ones.
    const reads = Object.fromEntries([...readAges].map(([id, ages]) => [id, ages.length]));
    expect(reads).toEqual({ 'unknown-status': 16, 'not-json': 16, down: 18, 'cut-short': 17 });
    const retried = (...early: number[]) => [...early, ...READ_AGES.slice(1)];
    expect(Object.fromEntries(readAges)).toEqual({
      'unknown-status': READ_AGES,
      'not-json': READ_AGES,
      // Unanswered at 3:00 and 3:20, answered pending at 3:40: then the schedule.
      down: retried(3 * MIN, 3 * MIN + ERROR_RETRY_MS, 3 * MIN + 2 * ERROR_RETRY_MS),
      'cut-short': retried(3 * MIN, 3 * MIN + ERROR_RETRY_MS),
    });
    expect(await nextDue()).toBe(createdAt + SWEEP_WINDOW_MS);
    // The first run logged each failure as a warning, with the time it is read again.
    expect(Object.fromEntries(firstRunLog.map((l) => [l.sessionId, [l.level, l.nextCheckAt - createdAt]]))).toEqual({
      'unknown-status': ['warn', 4.5 * MIN],
      'not-json': ['warn', 4.5 * MIN],
      down: ['warn', 3 * MIN + ERROR_RETRY_MS],
      'cut-short': ['warn', 3 * MIN + ERROR_RETRY_MS],
    });
  });
});
