/**
 * What the copyable sweep job (sweep-job.ts) takes and answers: its options, the kit it runs (given
 * or built by the integrator's factory), the settings a factory may size the kit by, its exit codes.
 */
import type { KitLogger } from '../logger.ts';
import type { SweepJobEnv } from './sweep-job-args.ts';
import type { SweepOptions, SweepWorkerOptions } from './sweep-options.ts';
import type { SweepReport } from './sweep-report.ts';
import type { SweepWorker } from './worker.ts';

/** The sweep job's exit codes. */
export const SweepJobExitCode = {
  Ok: 0,
  ConfigError: 1,
  ServiceUnreachable: 2,
  SweepFailed: 3,
} as const;

/**
 * What the job uses of a kit: its sweep, its store (to hand claims back and close) and close.
 * A structural type, so the job does not depend on the factory: a VerificationKit is one. A kit
 * written by hand (JavaScript) may give its worker through a promise: the job awaits it.
 */
export interface SweepJobKit<_Tx = unknown> {
  runSweep(options?: SweepOptions): Promise<SweepReport>;
  startSweepWorker(options: SweepWorkerOptions): SweepWorker;
  store: { releaseClaims(owner: string): Promise<number>; close(): Promise<void> };
  close(): Promise<void>;
}

/** What a kit factory may size the kit by: the job's own settings, parsed from argv and env. */
export interface SweepJobSettings {
  /** Status reads in flight: give the kit's client as many connections (`client: { connections }`). */
  concurrency: number;
}

/** Options of runSweepJob. */
export interface SweepJobOptions<Tx> {
  /**
   * The kit (the same options as the app's: store, actions, onOutcome), or a function building it
   * from `env` (the integrator's own configuration). A factory that throws, or has not built the kit
   * within `stopTimeoutMs`, is reported as a configuration error (exit 1); the kit and the store it
   * built are closed when the job ends.
   */
  kit: SweepJobKit<Tx> | ((env: SweepJobEnv, job: SweepJobSettings) => SweepJobKit<Tx> | Promise<SweepJobKit<Tx>>);
  /** Command-line arguments, without node and the script. Default `process.argv.slice(2)`. */
  argv?: readonly string[];
  /** Environment for SWEEP_* settings and the kit factory. Default `process.env`. */
  env?: SweepJobEnv;
  /**
   * The usage `--help` prints and a mistake in the flags shows: your command and the job's flags,
   * e.g. `usage: node sweep.js (--once | --loop) [--batch-size N] …`. Default: the job's flags only.
   */
  usage?: string;
  /** Receives each output line (no trailing newline). Default: write to stdout. */
  print?: (line: string) => void;
  /** Defaults for the sweep, overridden by env and then argv (e.g. a shorter lease). */
  sweep?: Omit<SweepOptions, 'signal' | 'logger' | 'owner'>;
  /** Stop the job (as SIGTERM would). */
  signal?: AbortSignal;
  /**
   * Stop gracefully on SIGTERM/SIGINT, and end the process at once on a second one. Default true:
   * the job owns its process, and then also lowers its CPU priority to `--nice` (see yieldToRequests)
   * and says an error the configuration's code left unhandled in a line, going on (unhandled-errors.ts).
   */
  handleSignals?: boolean;
  /**
   * How long a stop waits for in-flight reads before releasing claims, and the longest the job waits
   * for each of the integrator's calls around a run: a kit factory building the kit, the store
   * releasing the claims (else they lapse with their lease), and closing what the factory built.
   * Default 10 000 ms.
   */
  stopTimeoutMs?: number;
  /** Warnings and errors of individual checks (pino-compatible). Default: none (counts only). */
  logger?: KitLogger;
}
