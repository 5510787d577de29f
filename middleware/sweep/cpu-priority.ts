/**
 * The sweep job's CPU priority. Nobody waits on a sweep's reads, while a person waits on every
 * landing: on a host the job shares with the app, the landings should get the CPU first and the
 * sweep what is left (on an idle host, or under the service's rate limit, its pace does not change).
 *
 * A nice value alone does not say that on Linux:
 * - it belongs to one thread, so Node's own threads (the garbage collector's helpers, the compiler,
 *   the libuv pool) keep the priority they started with unless each is lowered;
 * - with session groups on (`kernel.sched_autogroup_enabled`, the default of most distributions),
 *   the kernel first shares the CPU between sessions, and nice only orders processes within one:
 *   a job that cron or systemd starts in a session of its own competes with the app at full
 *   weight whatever its nice value. Such a job lowers its session's group too, but only when it
 *   leads that session: then every process in the group is the job's own, never the app's.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** Where Linux keeps a process's threads and its session group. */
export interface ProcFiles {
  /** Thread ids of this process ([] where there is no /proc). */
  threads(): number[];
  /** This process's /proc/self/stat, or undefined. */
  stat(): string | undefined;
  /** The session group's line ("/autogroup-12 nice 0"), or undefined when groups are off. */
  autogroup(): string | undefined;
  setAutogroupNice(nice: number): void;
}

const readOrUndefined = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

export const linuxProc: ProcFiles = {
  threads: () => {
    try {
      return readdirSync('/proc/self/task').map(Number).filter(Number.isInteger);
    } catch {
      return [];
    }
  },
  stat: () => readOrUndefined('/proc/self/stat'),
  autogroup: () => readOrUndefined('/proc/self/autogroup'),
  setAutogroupNice: (nice) => writeFileSync('/proc/self/autogroup', String(nice)),
};

/** True when this process leads its session (its pid is the session id in /proc/self/stat). */
export function leadsOwnSession(stat: string | undefined, pid: number): boolean {
  if (stat === undefined) return false;
  // Fields after the command name, which may itself hold spaces and parentheses: state ppid pgrp session.
  const session = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
  return session === pid;
}

/** The nice value of the session group's line ("/autogroup-12 nice 0"), or undefined. */
export function autogroupNice(line: string | undefined): number | undefined {
  const match = line?.match(/ nice (-?\d+)\s*$/);
  return match === null || match === undefined ? undefined : Number(match[1]);
}

/** Runs `change`; a platform or sandbox that refuses it leaves the priority as it was. */
function tryTo(change: () => void): void {
  try {
    change();
  } catch {
    // Not permitted here: the job runs at the priority it was given.
  }
}

/**
 * Lowers this process's CPU priority to `nice`, never raising it: every thread of the process,
 * and the session group when the process leads its session (see above).
 */
export function yieldToRequests(nice: number, proc: ProcFiles = linuxProc, pid = process.pid): void {
  tryTo(() => {
    if (nice > getPriority()) setPriority(nice);
  });
  for (const thread of proc.threads()) {
    tryTo(() => {
      if (nice > getPriority(thread)) setPriority(thread, nice);
    });
  }
  const groupNice = autogroupNice(proc.autogroup());
  if (groupNice !== undefined && nice > groupNice && leadsOwnSession(proc.stat(), pid)) {
    tryTo(() => proc.setAutogroupNice(nice));
  }
}
