/**
 * Request/answer messages between the bench orchestrator and its child processes (fork + IPC).
 * Secrets travel only in these messages: never in argv, the environment or any output.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Envelope {
  id: number;
  op: string;
  args?: unknown;
}

export interface Answer {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

export interface Child {
  readonly pid: number;
  call<T = unknown>(op: string, args?: unknown, timeoutMs?: number): Promise<T>;
  /** Asks the child to close, then waits for its exit (killing it after `graceMs`). */
  stop(graceMs?: number): Promise<number | null>;
  /** Resolves with the exit code when the process ends. */
  readonly exited: Promise<number | null>;
}

/** Forks `bench/<script>` under tsx (one node process, so its pid is the one that does the work). */
export function spawnChild(script: string, name: string): Child {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const proc: ChildProcess = fork(path, [name], {
    // BENCH_CPU_PROF_DIR=dir: every child writes a V8 CPU profile there on exit (see bench/profile-summary.ts).
    execArgv: [
      '--import',
      'tsx',
      // BENCH_TRACE_GC=1: each child prints V8's GC lines (what a mark-compact leaves live, against a peak RSS).
      ...(process.env.BENCH_TRACE_GC ? ['--trace-gc'] : []),
      ...(process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  if (process.env.BENCH_CPU_PROF_DIR) process.stderr.write(`[bench] child ${name} is pid ${proc.pid}\n`);
  let nextId = 1;
  const pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  const exited = new Promise<number | null>((resolve) => {
    proc.once('exit', (code) => {
      for (const [, p] of pending) {
        clearTimeout(p.timer);
        p.reject(new Error(`bench child ${name} exited (code ${code}) before answering`));
      }
      pending.clear();
      resolve(code);
    });
  });
  proc.on('message', (message: Answer) => {
    const waiter = pending.get(message.id);
    if (waiter === undefined) return;
    pending.delete(message.id);
    clearTimeout(waiter.timer);
    if (message.ok) waiter.resolve(message.value);
    else waiter.reject(new Error(`bench child ${name}: ${message.error ?? 'failed'}`));
  });
  return {
    pid: proc.pid ?? -1,
    exited,
    call<T>(op: string, args?: unknown, timeoutMs = 600_000): Promise<T> {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`bench child ${name}: ${op} timed out after ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
        proc.send({ id, op, args } satisfies Envelope);
      });
    },
    async stop(graceMs = 5000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      if (proc.connected) proc.send({ id: 0, op: 'exit' } satisfies Envelope);
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** In a child: serve `handlers` over IPC. `exit` closes via `onExit` and ends the process. */
export function serve(
  handlers: Record<string, (args: never) => unknown>,
  onExit: () => Promise<void> = async () => {},
): void {
  const send = (answer: Answer) => process.send?.(answer);
  process.on('message', (message: Envelope) => {
    if (message.op === 'exit') {
      onExit().finally(() => process.exit(0));
      return;
    }
    const handler = handlers[message.op];
    if (handler === undefined) {
      send({ id: message.id, ok: false, error: `unknown op ${message.op}` });
      return;
    }
    Promise.resolve()
      .then(() => handler(message.args as never)) // the caller sends what this op's handler takes
      .then(
        (value) => send({ id: message.id, ok: true, value }),
        (error: unknown) =>
          send({ id: message.id, ok: false, error: error instanceof Error ? error.message : String(error) }),
      );
  });
  // The parent died: do not linger.
  process.on('disconnect', () => {
    onExit().finally(() => process.exit(0));
  });
}

/** Peak resident set of this process in KiB: VmHWM from /proc, or maxRSS where /proc is missing. */
export function peakRssKiB(): number {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match?.[1]) return Number(match[1]);
  } catch {
    // no /proc: fall back below
  }
  return process.resourceUsage().maxRSS;
}
