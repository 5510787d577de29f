/**
 * `hosted-sms-verify-kit fraud <what> --config ./verify.config.js`: SMS pumping for operators,
 * on the store the configuration names (the same module as the sweep job's). Lists what trips now
 * (with counts and thresholds), the rules in force, the recent decisions and texts per country and
 * day; blocks, releases or clears a country, a number block, an address or a user. Serves no route
 * and calls no service.
 */
import { createVerificationKit, type VerificationKit } from '../middleware/create-kit.ts';
import { keepingProcessAlive, withDeadline } from '../middleware/deadline.ts';
import { environmentSecrets, redactSecretFragments } from '../middleware/errors.ts';
import { cutForPrinting, withoutUrlPasswords } from '../middleware/printable-errors.ts';
import { describeError } from '../middleware/logger.ts';
import { namedUnlessNumber, quotedUnlessNumber } from '../middleware/numbers/mask-number.ts';
import type { VerificationKitOptions } from '../middleware/options/options.ts';
import { flagGivenTwice } from '../middleware/options/command-flags.ts';
import { MAX_DAYS, MAX_DECISIONS, MAX_HOURS, type PumpingTarget } from '../middleware/pumping/pumping-operations.ts';
import { UsageError, type Command, type CommandEnv } from './command.ts';
import { loadConfigModule } from './config-file.ts';

const USAGE = `usage: hosted-sms-verify-kit fraud <what> --config ./verify.config.js [options]
  tripped                    countries, number blocks and addresses whose rules trip now, with counts and thresholds
  rules                      operators' blocks and releases in force
  decisions [--hours N] [--limit N]   decisions of the last N hours (default 24, up to 8784: a year),
                             newest first, the newest --limit of them (default 100, up to 10000)
  days [--by country|block] [--days N]   texts sent and verified per day (default by country, 14 days,
                             up to 15)
  block   <target> [--hours N]   refuse every start to it (default 12 hours, up to a year)
  release <target> [--hours N]   send its starts whatever the counts say (default 24 hours)
  clear   <target>               remove a block or a release
  <target> is one of --country CC, --block +NNN (a number without its last three digits),
           --address A (IPv4, or IPv6 for its prefix as the counters key it: /64 or
           limits.ipv6Subnet), --user REF
  --config FILE              module whose default export is the kit's options, a kit, { kit, close },
                             or a function of env returning one (env VERIFY_CONFIG)
  --json                     one JSON document instead of lines
Exit codes: 0 done, 1 usage or configuration error, or the store did not answer in time (the kit's
hookTimeouts.limits, 5 s by default; 30 s at most for a ready kit's own operations).`;

const WHATS = ['tripped', 'rules', 'decisions', 'days', 'block', 'release', 'clear'] as const;
type What = (typeof WHATS)[number];

interface Args {
  what: What;
  file: string;
  target: PumpingTarget;
  hours: number | undefined;
  days: number | undefined;
  limit: number | undefined;
  by: 'country' | 'block';
  json: boolean;
}

/** Each number flag's most, and why: beyond it the operations would cap it or refuse it. */
const MOST: Readonly<Record<string, { max: number; why: string }>> = {
  '--hours': { max: MAX_HOURS, why: ' (a year)' },
  '--days': { max: MAX_DAYS, why: ' (the days the counters keep)' },
  '--limit': { max: MAX_DECISIONS, why: '' },
};

function number(flag: string, value: string | undefined): number {
  // Decimal only: Number() would read 0x10 as 16 and 1e3 as 1000.
  const parsed = value !== undefined && /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(parsed) || parsed <= 0) {
    throw new UsageError(`${flag} needs a positive number, e.g. ${flag} 12.`);
  }
  // Said, never capped: an operator who asked for 30 days must not read 15 as all of them.
  const most = MOST[flag];
  if (most !== undefined && parsed > most.max) {
    throw new UsageError(`${flag} is at most ${most.max}${most.why}; got ${namedUnlessNumber(value)}.`);
  }
  return parsed;
}

const TARGET_FLAGS: ReadonlyMap<string, keyof PumpingTarget> = new Map([
  ['--country', 'country'],
  ['--block', 'block'],
  ['--address', 'address'],
  ['--user', 'user'],
]);

const COMMON = ['--config', '--json'];
const TARGETS = [...TARGET_FLAGS.keys()];
/** The flags each command reads, besides --config and --json. */
const TAKES: Readonly<Record<What, readonly string[]>> = {
  tripped: [],
  rules: [],
  decisions: ['--hours', '--limit'],
  days: ['--by', '--days'],
  block: [...TARGETS, '--hours'],
  release: [...TARGETS, '--hours'],
  clear: TARGETS,
};
const ALL_FLAGS = new Set([...COMMON, ...Object.values(TAKES).flat()]);
/** The flags that take one value (a target named twice is refused on its own). */
const ONCE = ['--config', '--hours', '--days', '--limit', '--by'];

function parse(argv: readonly string[], env: CommandEnv): Args {
  const [what, ...rest] = argv;
  if (!WHATS.includes(what as What)) throw new UsageError(`say what: one of ${WHATS.join(', ')}.`);
  const args: Args = {
    what: what as What,
    file: env.VERIFY_CONFIG ?? '',
    target: {},
    hours: undefined,
    days: undefined,
    limit: undefined,
    by: 'country',
    json: false,
  };
  // A second one would silently replace the first: the operator meant one of them, and which is unsaid.
  // (Of the flags this command takes: another is refused below as one it does not take.)
  const twice = flagGivenTwice(
    rest,
    ONCE.filter((flag) => COMMON.includes(flag) || TAKES[args.what].includes(flag)),
  );
  if (twice !== undefined) throw new UsageError(twice);
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i] ?? '';
    // A flag this command does not read would be ignored: the operator meant it, and gets something else.
    if (ALL_FLAGS.has(flag) && !COMMON.includes(flag) && !TAKES[args.what].includes(flag)) {
      const takes = TAKES[args.what];
      throw new UsageError(
        `${args.what} does not take ${flag}: it takes ${takes.length === 0 ? 'only --json' : takes.join(', ')}.`,
      );
    }
    const value = (): string => {
      const next = rest[++i];
      if (next === undefined || next.startsWith('--')) throw new UsageError(`${flag} needs a value.`);
      return next;
    };
    const target = TARGET_FLAGS.get(flag);
    if (flag === '--config') args.file = value();
    else if (target !== undefined) {
      // A second one would silently replace the first: the operator meant both, and gets one.
      if (args.target[target] !== undefined) throw new UsageError(`${flag} given twice: name one target a run.`);
      args.target[target] = value();
    } else if (flag === '--hours') args.hours = number(flag, value());
    else if (flag === '--days') args.days = number(flag, value());
    else if (flag === '--limit') args.limit = number(flag, value());
    else if (flag === '--by') {
      const by = value();
      if (by !== 'country' && by !== 'block') throw new UsageError('--by is country or block.');
      args.by = by;
    } else if (flag === '--json') args.json = true;
    // Quoted unless it may hold a number: `--block=+447400123456` is an unknown option too.
    else if (flag.startsWith('-')) throw new UsageError(`unknown option ${quotedUnlessNumber(flag)}.`);
    // A value without its flag is not printed back: it may be a whole phone number.
    else
      throw new UsageError(
        'a value was given without its flag: name a target with --country, --block, --address or --user.',
      );
  }
  if (args.file === '') throw new UsageError('--config FILE is required.');
  const acts = args.what === 'block' || args.what === 'release' || args.what === 'clear';
  if (acts && Object.keys(args.target).length !== 1) {
    throw new UsageError(`${args.what} needs exactly one target: --country, --block, --address or --user.`);
  }
  return args;
}

interface Loaded {
  kit: VerificationKit<unknown>;
  close(): Promise<void>;
}

/** How long a configuration's function of env gets to answer (the sweep job's own deadline for it). */
const BUILD_MS = 10_000;

/**
 * A configuration's function of env, within BUILD_MS: one that waits on something that never
 * answers ends the command with that said, never holds it (nor lets it end saying nothing).
 */
function built(factory: (env: CommandEnv) => unknown, env: CommandEnv, file: string): Promise<unknown> {
  return keepingProcessAlive(() =>
    withDeadline(
      'configuration',
      BUILD_MS,
      () => factory(env),
      () =>
        new Error(
          `--config ${file}: its function of env did not answer within ${BUILD_MS} ms: does it wait on something that never answers?`,
        ),
    ),
  );
}

/** The kit the configuration names (ready, or built with no route), and how to close what it opened. */
async function load(file: string, env: CommandEnv): Promise<Loaded> {
  const exported = await loadConfigModule(file);
  const given: unknown =
    typeof exported === 'function' ? await built(exported as (e: CommandEnv) => unknown, env, file) : exported;
  const owning =
    typeof given === 'object' && given !== null && 'kit' in given
      ? (given as { kit: unknown; close?: () => unknown })
      : undefined;
  const value = owning?.kit ?? given;
  if (typeof value !== 'object' || value === null) {
    throw new UsageError(
      `--config ${file}: its default export must be the kit's options, a kit, { kit, close }, or a function of env returning one of them.`,
    );
  }
  // The options may carry a `pumping` option, an object too: a kit is told by what it can do.
  const ready = typeof (value as Partial<VerificationKit<unknown>>).pumping?.tripped === 'function';
  const options = value as VerificationKitOptions<unknown>;
  const kit = ready
    ? (value as VerificationKit<unknown>)
    : createVerificationKit<unknown>({
        ...options,
        resolveUser: options.resolveUser ?? (() => null),
        routes: { start: false, landing: false },
      });
  return {
    kit,
    async close() {
      await kit.close();
      if (!ready) await kit.store.close();
      await owning?.close?.();
    },
  };
}

/** How long what the configuration opened gets to close (the sweep job's own deadline for it). */
const CLOSE_MS = BUILD_MS;

/** An error's message as a line of stderr may show it: no secret of the environment, no URL's password, cut. */
function printable(error: unknown, env: CommandEnv): string {
  return cutForPrinting(
    withoutUrlPasswords(redactSecretFragments(String(describeError(error).message), environmentSecrets(env))),
  );
}

/**
 * Closes what the configuration opened: a close of its own that hangs or throws is said on stderr
 * and never holds the command, nor changes what it did (its answer is printed already). One that
 * fails after the deadline, while the process still runs, says why on a line of its own.
 */
async function closeWithin(close: () => Promise<void>, env: CommandEnv): Promise<void> {
  const onLateRejection = (_name: string, error: unknown) =>
    process.stderr.write(
      `hosted-sms-verify-kit fraud: closing what the configuration opened failed after its deadline: ${printable(error, env)}\n`,
    );
  try {
    await keepingProcessAlive(() =>
      withDeadline('close', CLOSE_MS, close, {
        late: () => new Error(`closing did not finish within ${CLOSE_MS} ms`),
        onLateRejection,
      }),
    );
  } catch (error) {
    process.stderr.write(
      `hosted-sms-verify-kit fraud: could not close what the configuration opened: ${printable(error, env)}\n`,
    );
  }
}

/** How long the store gets to answer what the command asked. */
const ANSWER_MS = 30_000;

/** What the command prints: a JSON-able value, and its lines for a person. */
async function perform(kit: VerificationKit<unknown>, args: Args): Promise<{ value: unknown; lines: string[] }> {
  const { pumping } = kit;
  switch (args.what) {
    case 'tripped': {
      const tripped = await pumping.tripped();
      const lines = tripped.map(
        (t) =>
          `${t.dimension} ${t.key}: ${t.reasons.join(', ') || 'no rule'}${t.rule === undefined ? '' : ` (${t.rule === 'block' ? 'blocked' : 'released'} by an operator)`}; ` +
          `unverified ${t.unverifiedLastHour} in the last hour (threshold ${t.hourlyThreshold}), ${t.unverifiedLastDay} in 24 h (threshold ${t.dailyThreshold})`,
      );
      return { value: tripped, lines: lines.length === 0 ? ['nothing trips now'] : lines };
    }
    case 'rules': {
      const rules = await pumping.rules();
      const lines = rules.map(
        (r) =>
          `${r.rule === 'block' ? 'blocked' : 'released'} ${r.dimension} ${r.key} until ${new Date(r.until).toISOString()}`,
      );
      return { value: rules, lines: lines.length === 0 ? ['no rules in force'] : lines };
    }
    case 'decisions': {
      const limit = args.limit ?? 100;
      const decisions = await pumping.decisions({ hours: args.hours ?? 24, limit });
      const lines = decisions.map(
        (d) =>
          `${new Date(d.decidedAt).toISOString()} ${d.decision} ${d.country} ${d.block} from ${d.address}: ${d.reasons.join(', ')}`,
      );
      // A full page may not be all of them: said, or an attack's thousands read as a hundred.
      if (decisions.length >= Math.trunc(limit)) lines.push(`the newest ${decisions.length} shown; --limit N for more`);
      return { value: decisions, lines: lines.length === 0 ? ['no decisions'] : lines };
    }
    case 'days': {
      const days = await pumping.countsByDay({ by: args.by, days: args.days ?? 14 });
      const lines = days.map((d) => `${d.key} ${d.daysAgo} day(s) ago: ${d.sent} sent, ${d.verified} verified`);
      // Said, not a blank line: an operator must not wonder whether the store was read at all.
      return { value: days, lines: lines.length === 0 ? [`no texts counted in those days (by ${args.by})`] : lines };
    }
    case 'block':
    case 'release': {
      const rule = await pumping[args.what](args.target, args.hours);
      const done = `${args.what === 'block' ? 'blocked' : 'released'} ${rule.dimension} ${rule.key} until ${new Date(rule.until).toISOString()}`;
      return { value: rule, lines: [done] };
    }
    case 'clear': {
      const cleared = await pumping.clear(args.target);
      return { value: { cleared }, lines: [cleared ? 'cleared' : 'there was no block or release on it'] };
    }
  }
}

export const command: Command = {
  summary: 'SMS pumping: what trips, the decisions; block or release a country or number block',
  usage: USAGE,
  async run(argv, env) {
    const args = parse(argv, env);
    const { kit, close } = await load(args.file, env);
    try {
      // A store call that never settles ends the command, exit 1, saying so.
      const { value, lines } = await keepingProcessAlive(() =>
        withDeadline(
          'store',
          ANSWER_MS,
          () => perform(kit, args),
          () => new Error(`the store did not answer within ${ANSWER_MS} ms: is its database reachable?`),
        ),
      );
      process.stdout.write(args.json ? `${JSON.stringify(value)}\n` : `${lines.join('\n')}\n`);
      return 0;
    } finally {
      await closeWithin(close, env);
    }
  },
};
