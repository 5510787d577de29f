/**
 * emulatorControl against an address that is not a working emulator: a server that takes the
 * connection and never answers, and one that answers a page. Before, the first held the caller
 * (an audit, a test suite) for undici's five-minute body timeout, and the second threw a bare
 * SyntaxError naming neither the call nor the address.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EmulatorControlError, emulatorControl } from '../../emulator/control/control-client.ts';

let server: Server | undefined;
const held: ServerResponse[] = [];

async function serve(answer: (res: ServerResponse) => void): Promise<string> {
  server = createServer((_req, res) => answer(res));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  vi.restoreAllMocks();
  for (const res of held.splice(0)) res.destroy();
  const closing = server;
  server = undefined;
  if (closing !== undefined) await new Promise((resolve) => closing.close(resolve));
});

describe('emulatorControl with an address that is not a working emulator', () => {
  it('fails a call that gets no answer within timeoutMs with control_timeout naming the call and the address', async () => {
    const url = await serve((res) => held.push(res));
    const error = await emulatorControl(url, { timeoutMs: 500 })
      .stats()
      .catch((thrown: unknown) => thrown);
    // Not a refused connection (a TypeError from fetch): the deadline ended the call.
    expect(error).toBeInstanceOf(EmulatorControlError);
    expect(error).toMatchObject({ code: 'control_timeout' });
    expect((error as Error).message).toBe(
      `Emulator control GET /stats did not answer within 500 ms: is ${url} the emulator, started with control: true?`,
    );
  });

  it('waits 10 seconds by default, and clears its timer once answered', async () => {
    const url = await serve((res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const clears = vi.spyOn(globalThis, 'clearTimeout');
    await emulatorControl(url).reset();
    const deadline = timers.mock.results.findIndex((_, i) => timers.mock.calls[i]![1] === 10_000);
    expect(deadline).toBeGreaterThanOrEqual(0);
    expect(clears.mock.calls.map(([timer]) => timer)).toContain(timers.mock.results[deadline]!.value);
  });

  it('an answer that is not JSON is control_not_json naming the call and the address, not a SyntaxError', async () => {
    const url = await serve((res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><p>shop'));
    const error = await emulatorControl(url)
      .sentMessages()
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(EmulatorControlError);
    expect(error).toMatchObject({ code: 'control_not_json', status: 200 });
    expect((error as Error).message).toBe(
      `Emulator control GET /outbox answered 200 with a body that is not JSON: is ${url} the emulator?`,
    );
  });

  it.each([0, -1, 1.5, Number.NaN, 2 ** 31])('refuses timeoutMs %s, naming the bound', (timeoutMs) => {
    expect(() => emulatorControl('http://127.0.0.1:9', { timeoutMs })).toThrow(
      /`timeoutMs` must be whole milliseconds from 1 to 2147483647/,
    );
  });
});
