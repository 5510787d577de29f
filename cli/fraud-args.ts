/**
 * What `hosted-sms-verify-kit fraud` was asked: the command, its target and its flags, each flag
 * checked against what that command reads (a flag given twice, out of range or not taken is refused).
 */
import { namedUnlessNumber } from '../middleware/numbers/mask-number.ts';
import { flagGivenTwice } from '../middleware/options/command-flags.ts';
import { shownArgument } from '../middleware/printable-errors.ts';
import { MAX_DAYS, MAX_DECISIONS, MAX_HOURS, type PumpingTarget } from '../middleware/pumping/pumping-operations.ts';
import { UsageError, type CommandEnv } from './command.ts';

const WHATS = ['tripped', 'rules', 'decisions', 'days', 'block', 'release', 'clear'] as const;
export type What = (typeof WHATS)[number];

export interface Args {
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

export function parse(argv: readonly string[], env: CommandEnv): Args {
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
    else if (flag.startsWith('-')) throw new UsageError(`unknown option ${shownArgument(flag, ALL_FLAGS)}.`);
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
