/**
 * `hosted-sms-verify-kit sweep --once|--loop --config ./verify.config.js`: the sweep job, for
 * cron, a systemd timer or a Kubernetes CronJob. The configuration module's default export is the
 * kit's options (the same your app passes to createVerificationKit: store, actions, onOutcome),
 * a ready kit, or a function of the environment returning either. The job builds a kit that
 * serves no route, runs the job (`runSweepJob`), and closes the kit and its store when it ends.
 */
import {
  createVerificationKit,
  type SweepJobKit,
  type SweepJobSettings,
  type VerificationKitOptions,
} from '../middleware/index.ts';
import { environmentSecrets, redactSecretFragments } from '../middleware/errors.ts';
import { flagGivenTwice } from '../middleware/options/command-flags.ts';
import { isVerifyClient } from '../middleware/options/options-resolve.ts';
import { JOB_SETTINGS_SYNOPSIS, JOB_VALUE_FLAGS } from '../middleware/sweep/sweep-job-args.ts';
import { poolOf } from '../middleware/sweep/pool-errors.ts';
import { runSweepJobUntilExit } from '../middleware/sweep/sweep-job.ts';
import { UsageError, type Command, type CommandEnv } from './command.ts';
import { loadConfigModule } from './config-file.ts';

/**
 * The command and every flag it takes, on one line: the first line of --help, and what a mistake
 * in the job's flags shows.
 */
const SYNOPSIS = `usage: hosted-sms-verify-kit sweep (--once | --loop) --config ./verify.config.js ${JOB_SETTINGS_SYNOPSIS}`;

const USAGE = `${SYNOPSIS}
  --once                     one sweep, one JSON line, then exit (cron, a systemd timer, a CronJob)
  --loop                     a sweep every --interval-seconds until SIGTERM/SIGINT
  --config FILE              module whose default export is the kit's options, a kit, { kit, close }
                             (close: what to release at the end, e.g. () => pool.end()), or (env) => any of them
                             (env VERIFY_CONFIG)
  --interval-seconds N       pause between runs with --loop (env SWEEP_INTERVAL_SECONDS; default 60)
  --batch-size N             attempts claimed per store call (env SWEEP_BATCH_SIZE; default 50)
  --concurrency N            status reads in flight (env SWEEP_CONCURRENCY; default 4)
  --time-budget-seconds N    a run's reading time: no read starts in its last half or its last fulfil timeout,
                             the shorter, and what started then finishes (env SWEEP_TIME_BUDGET_SECONDS; default 60)
  --lease-seconds N          claim lease (env SWEEP_LEASE_SECONDS; default 120)
  --max-reads-per-second N   status reads a second, all sweep processes together (env SWEEP_MAX_READS_PER_SECOND)
  --nice N                   this process's CPU priority, 0-19 (env SWEEP_NICE; default 10; 0 keeps it)
Exit codes: 0 done, 1 configuration error, 2 the service could not be reached, 3 the sweep failed.`;

/** `--config FILE` or `--config=FILE`, and the other arguments for the job. */
function splitConfig(argv: readonly string[], env: CommandEnv): { file: string; rest: string[] } {
  const twice = flagGivenTwice(argv, ['--config', ...JOB_VALUE_FLAGS]);
  if (twice !== undefined) throw new UsageError(twice);
  const rest: string[] = [];
  let file = env.VERIFY_CONFIG;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--config') file = argv[++i];
    else if (arg.startsWith('--config=')) file = arg.slice('--config='.length);
    else rest.push(arg);
  }
  if (file === undefined || file === '') throw new UsageError('--config FILE is required.');
  if (!rest.includes('--once') && !rest.includes('--loop')) {
    throw new UsageError('say --once (one run, for a scheduler) or --loop (keep sweeping).');
  }
  return { file, rest };
}

/** `{ kit, close }`: the kit (or its options) and what the job releases after it closed them. */
interface OwningConfig {
  kit: unknown;
  close(): unknown;
}

/** What `{ kit, close }` takes. No option of the kit is called `kit`: an object with one is this. */
const OWNING_KEYS: readonly string[] = ['kit', 'close'];

/**
 * `value` as `{ kit, close }`, undefined when it is not one (no `kit`). One that also holds a
 * setting it does not take, or no `close` function, is refused: its settings would be ignored, or
 * it would be read as the kit's options and refused for want of every one of them.
 */
function owningConfig(file: string, value: unknown, env: CommandEnv): OwningConfig | undefined {
  if (typeof value !== 'object' || value === null || !('kit' in value)) return undefined;
  const problems: string[] = [];
  const others = Object.keys(value).filter((key) => !OWNING_KEYS.includes(key));
  if (others.length > 0) {
    // Cut once redacted: a key cut first could keep a few characters of a secret no redaction tells apart.
    const secrets = environmentSecrets(env);
    const named = others.map((key) => JSON.stringify(redactSecretFragments(key, secrets).slice(0, 40))).join(', ');
    problems.push(
      `${named} ${others.length === 1 ? 'is' : 'are'} not taken there (the job's settings are its flags or SWEEP_* variables, the kit's go in \`kit\`)`,
    );
  }
  if (typeof (value as { close?: unknown }).close !== 'function') {
    problems.push(
      '`close` must be a function, what to release at the end (e.g. () => pool.end()); with nothing to release, export the kit or its options alone',
    );
  }
  if (problems.length > 0) {
    throw new UsageError(`--config ${file}: its default export { kit, close }: ${problems.join('; ')}.`);
  }
  return value as OwningConfig;
}

/**
 * The kit, whose store's close also releases what the configuration owns (after the store). Its
 * store keeps the pool, for the job to hear the connections the database ends.
 */
function releasingAfterStore(kit: SweepJobKit, release: () => unknown): SweepJobKit {
  const pool = poolOf(kit.store);
  return {
    runSweep: (options) => kit.runSweep(options),
    startSweepWorker: (options) => kit.startSweepWorker(options),
    close: () => kit.close(),
    store: {
      ...(pool === undefined ? {} : { pool }),
      releaseClaims: (owner) => kit.store.releaseClaims(owner),
      async close() {
        try {
          await kit.store.close();
        } finally {
          await release();
        }
      },
    },
  };
}

function isKit(value: unknown): value is SweepJobKit {
  return typeof (value as SweepJobKit | null)?.runSweep === 'function' && typeof value === 'object';
}

/**
 * The kit the configuration names: given ready, or built from its options with no route mounted
 * and, unless they say otherwise, a connection to the service per status read in flight.
 */
async function kitFromConfig(file: string, env: CommandEnv, job: SweepJobSettings): Promise<SweepJobKit> {
  const exported = await loadConfigModule(file);
  const given: unknown =
    typeof exported === 'function' ? await (exported as (e: CommandEnv) => unknown)(env) : exported;
  const owning = owningConfig(file, given, env);
  if (owning !== undefined) return releasingAfterStore(await kitOf(file, owning.kit, job), () => owning.close());
  return kitOf(file, given, job);
}

async function kitOf(file: string, value: unknown, job: SweepJobSettings): Promise<SweepJobKit> {
  if (isKit(value)) return value;
  if (typeof value !== 'object' || value === null) {
    throw new UsageError(
      `--config ${file}: its default export must be the kit's options, a kit, { kit, close }, or a function of env returning one of them.`,
    );
  }
  const options = value as VerificationKitOptions<unknown>;
  // Nobody signs in to a job and it serves no route; everything else is the app's own configuration.
  return createVerificationKit<unknown>({
    ...options,
    client: sweepClient(options.client, job.concurrency),
    resolveUser: options.resolveUser ?? (() => null),
    routes: { start: false, landing: false },
  });
}

/** The client settings with `connections` at the job's concurrency, unless set (or a ready client is given). */
function sweepClient(client: VerificationKitOptions<unknown>['client'], concurrency: number) {
  if (client !== undefined && isVerifyClient(client)) return client;
  return { connections: concurrency, ...client };
}

export const command: Command = {
  summary: 'fulfil verifications nobody landed',
  usage: USAGE,
  async run(argv, env) {
    const { file, rest } = splitConfig(argv, env);
    // The process exits shortly after the job (main.ts's exit grace): its errors are said until then.
    const kit = (jobEnv: CommandEnv, job: SweepJobSettings) => kitFromConfig(file, jobEnv, job);
    return runSweepJobUntilExit({ kit, argv: rest, env, usage: SYNOPSIS });
  },
};
