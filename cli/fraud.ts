/**
 * `hosted-sms-verify-kit fraud <what> --config ./verify.config.js`: SMS pumping for operators,
 * on the store the configuration names (the same module as the sweep job's). Lists what trips now
 * (with counts and thresholds), the rules in force, the recent decisions and texts per country and
 * day; blocks, releases or clears a country, a number block, an address or a user. Serves no route
 * and calls no service.
 */
import type { VerificationKit } from '../middleware/create-kit.ts';
import { keepingProcessAlive, withDeadline } from '../middleware/deadline.ts';
import { environmentSecrets, redactSecretFragments } from '../middleware/errors.ts';
import type { Command } from './command.ts';
import { parse, type Args } from './fraud-args.ts';
import { closeWithin, load, sayUnhandledErrors } from './fraud-config.ts';

const USAGE = `usage: hosted-sms-verify-kit fraud <what> --config ./verify.config.js [options]
  tripped                    countries, number blocks and addresses whose rules trip now, with counts and thresholds
  rules                      operators' blocks and releases in force
  decisions [--hours N] [--limit N]   decisions of the last N hours (default 24, up to 8784: a year),
                             newest first, the newest --limit of them (default 100, up to 10000)
  days [--by country|block] [--days N]   texts sent and verified per day (default by country, 14 days,
                             up to 15)
  block   <target> [--hours N]   refuse every start to it (default 12 hours; a minute to a year)
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

/**
 * Characters JSON leaves raw that drive a terminal or reorder what it shows: DEL and the C1
 * controls (\u009b starts an escape sequence), line separators, and the bidi embeddings, overrides
 * and isolates.
 */
const RAW_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** Those, and the C0 controls JSON escapes. */
const DRIVES_TERMINAL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** JSON with no character left raw that drives a terminal: still JSON (each one a \u escape inside a string). */
function jsonText(value: unknown): string {
  return JSON.stringify(value).replace(RAW_IN_JSON, escaped);
}

/**
 * A key as a line shows it: as stored, or quoted with its controls escaped. A user's key is the
 * app's userRef, which a user may choose: it must not clear the operator's terminal or hide a rule.
 */
function shown(key: string): string {
  return DRIVES_TERMINAL.test(key) ? jsonText(key) : key;
}

/** How long the store gets to answer what the command asked. */
const ANSWER_MS = 30_000;

/** That nothing trips, and how many operators' rules are in force (which `tripped` may not show). */
function nothingTrips(rules: number): string {
  if (rules === 0) return 'nothing trips now';
  return `nothing trips now; ${rules} operator ${rules === 1 ? 'rule' : 'rules'} in force: fraud rules lists ${rules === 1 ? 'it' : 'them'}`;
}

/** What the command prints: a JSON-able value, and its lines for a person. */
async function perform(kit: VerificationKit<unknown>, args: Args): Promise<{ value: unknown; lines: string[] }> {
  const { pumping } = kit;
  switch (args.what) {
    case 'tripped': {
      const tripped = await pumping.tripped();
      const lines = tripped.map(
        (t) =>
          `${t.dimension} ${shown(t.key)}: ${t.reasons.join(', ') || 'no rule'}${t.rule === undefined ? '' : ` (${t.rule === 'block' ? 'blocked' : 'released'} by an operator)`}; ` +
          `unverified ${t.unverifiedLastHour} in the last hour (threshold ${t.hourlyThreshold}), ${t.unverifiedLastDay} in 24 h (threshold ${t.dailyThreshold})`,
      );
      if (lines.length > 0 || args.json) return { value: tripped, lines };
      // tripped() lists a block or release only on a key with recent traffic: one in force without it is said here.
      return { value: tripped, lines: [nothingTrips((await pumping.rules()).length)] };
    }
    case 'rules': {
      const rules = await pumping.rules();
      const lines = rules.map(
        (r) =>
          `${r.rule === 'block' ? 'blocked' : 'released'} ${r.dimension} ${shown(r.key)} until ${new Date(r.until).toISOString()}`,
      );
      return { value: rules, lines: lines.length === 0 ? ['no rules in force'] : lines };
    }
    case 'decisions': {
      const limit = args.limit ?? 100;
      const decisions = await pumping.decisions({ hours: args.hours ?? 24, limit });
      const lines = decisions.map(
        (d) =>
          `${new Date(d.decidedAt).toISOString()} ${d.decision} ${shown(d.country)} ${shown(d.block)} from ${shown(d.address)}: ${shown(d.reasons.join(', '))}`,
      );
      // A full page may not be all of them: said, or an attack's thousands read as a hundred.
      if (decisions.length >= Math.trunc(limit)) lines.push(`the newest ${decisions.length} shown; --limit N for more`);
      return { value: decisions, lines: lines.length === 0 ? ['no decisions'] : lines };
    }
    case 'days': {
      const days = await pumping.countsByDay({ by: args.by, days: args.days ?? 14 });
      const lines = days.map((d) => `${shown(d.key)} ${d.daysAgo} day(s) ago: ${d.sent} sent, ${d.verified} verified`);
      // Said, not a blank line: an operator must not wonder whether the store was read at all.
      return { value: days, lines: lines.length === 0 ? [`no texts counted in those days (by ${args.by})`] : lines };
    }
    case 'block':
    case 'release': {
      const rule = await pumping[args.what](args.target, args.hours);
      const done = `${args.what === 'block' ? 'blocked' : 'released'} ${rule.dimension} ${shown(rule.key)} until ${new Date(rule.until).toISOString()}`;
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
  async run(argv, env, givenWrite, givenWarn) {
    const write = givenWrite ?? ((text: string) => void process.stdout.write(text));
    const warn = givenWarn ?? ((text: string) => void process.stderr.write(text));
    const args = parse(argv, env);
    const unhandled = sayUnhandledErrors(env, warn);
    // On the process's own streams the command owns the process: said until it exits. Called in a
    // process of the caller's (its own streams given), the caller's handlers apply again after it.
    const done = () => (givenWarn === undefined ? unhandled.keepUntilExit() : unhandled.dispose());
    let loaded: Awaited<ReturnType<typeof load>>;
    try {
      loaded = await load(args.file, env, unhandled);
    } catch (error) {
      done();
      throw error;
    }
    const { kit, close } = loaded;
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
      // Redacted as its errors are: a rule stored before targets were checked may hold a secret.
      const text = args.json ? `${jsonText(value)}\n` : `${lines.join('\n')}\n`;
      write(redactSecretFragments(text, environmentSecrets(env)));
      return 0;
    } finally {
      await closeWithin(close, env, warn);
      done();
    }
  },
};
