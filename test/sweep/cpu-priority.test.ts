/**
 * The sweep job's CPU priority (cpu-priority.ts): every thread lowered, never raised, and the
 * session group lowered only when the process leads its session, so a job that shares a session
 * with the app never lowers the app.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  autogroupNice,
  leadsOwnSession,
  yieldToRequests,
  type ProcFiles,
} from '../../middleware/sweep/cpu-priority.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/yield-cpu.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Yielded {
  pid: number;
  threads: { tid: number; nice: number }[];
  autogroup: string | null;
}

/** Runs the fixture (in a session of its own when `ownSession`) and returns what it printed. */
function yieldingProcess(nice: number, ownSession: boolean): Promise<Yielded> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, String(nice)], {
      cwd: ROOT,
      detached: ownSession,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as Yielded) : reject(new Error(err))));
  });
}

/** This machine's session groups: on where the kernel has them (the CI machines do). */
const ownGroup = (() => {
  try {
    return readFileSync('/proc/self/autogroup', 'utf8');
  } catch {
    return undefined;
  }
})();

describe('yieldToRequests', () => {
  it('reads the session id after the command name, whatever the name holds', () => {
    const stat = (name: string, session: number) => `4242 (${name}) S 1 4242 ${session} 0 -1 4194560 ...`;
    expect(leadsOwnSession(stat('node', 4242), 4242)).toBe(true);
    expect(leadsOwnSession(stat('node', 17), 4242)).toBe(false);
    expect(leadsOwnSession(stat('a) S 1 4242 4242 (b', 17), 4242)).toBe(false);
    expect(leadsOwnSession(undefined, 4242)).toBe(false);
  });

  it('reads the session group nice value, or none where groups are off', () => {
    expect(autogroupNice('/autogroup-85 nice 0\n')).toBe(0);
    expect(autogroupNice('/autogroup-85 nice -5\n')).toBe(-5);
    expect(autogroupNice(undefined)).toBeUndefined();
    expect(autogroupNice('garbage')).toBeUndefined();
  });

  it('lowers the session group only for a session leader, never raises it, and survives a refusal', () => {
    const written: number[] = [];
    const proc = (session: number, group: string | undefined, refuse = false): ProcFiles => ({
      threads: () => [],
      stat: () => `100 (node) S 1 100 ${session} 0`,
      autogroup: () => group,
      setAutogroupNice: (nice) => {
        if (refuse) throw new Error('EACCES');
        written.push(nice);
      },
    });
    yieldToRequests(10, proc(100, '/autogroup-1 nice 0'), 100);
    expect(written).toEqual([10]);
    yieldToRequests(10, proc(7, '/autogroup-1 nice 0'), 100); // the app's session, or a shell's
    yieldToRequests(10, proc(100, '/autogroup-1 nice 15'), 100); // already lower
    yieldToRequests(10, proc(100, undefined), 100); // no session groups
    expect(written).toEqual([10]);
    expect(() => yieldToRequests(12, proc(100, '/autogroup-1 nice 0', true), 100)).not.toThrow();
  });

  it('as a real process lowers every one of its threads, not only the one that asked', async () => {
    const own = getPriority();
    const yielded = await yieldingProcess(10, false);
    // Node starts several threads (the garbage collector's helpers, the compiler) before any code runs.
    expect(yielded.threads.length).toBeGreaterThan(1);
    expect(yielded.threads.map((t) => t.nice)).toEqual(yielded.threads.map(() => Math.max(own, 10)));
  });

  it("as a real process in a shared session leaves the session's group alone", async () => {
    const yielded = await yieldingProcess(10, false);
    expect(yielded.autogroup).toBe(ownGroup ?? null);
  });

  it('as a real process leading its own session lowers that session group too', async () => {
    const yielded = await yieldingProcess(10, true);
    if (ownGroup === undefined) {
      // A kernel without session groups: nice alone orders the processes; the job still lowered it.
      expect(yielded.autogroup).toBeNull();
      expect(yielded.threads.every((t) => t.nice >= 10)).toBe(true);
    } else {
      expect(yielded.autogroup).not.toBe(ownGroup);
      // A new session starts a group of its own at nice 0.
      expect(autogroupNice(yielded.autogroup ?? undefined)).toBe(10);
    }
  });
});
