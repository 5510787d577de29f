/**
 * What every step of one sweep run reads and updates (`Run`), and how a run starts: its logger, its
 * clock and time budget, its pacer, its group committer (sweep-run.ts runs the steps).
 */
import { groupCommitter, type FulfilCommitter } from '../fulfil/group-commit.ts';
import { safeLogger, type KitLogger } from '../logger.ts';
import type { Attempt, NextCheck, OutcomeRecording } from '../store/types.ts';
import { gatherWindowMs } from './gather-window.ts';
import { createPacer, type Pacer } from './pacing.ts';
import { readAnswers, type ReadAnswers } from './read-answers.ts';
import type { ResolvedSweepOptions, SweepOptions } from './sweep-options.ts';
import { emptyReport, type SweepDeps, type SweepReport } from './sweep-report.ts';
import { readsCutOff, runBudget, withinBudget, type ReadsCutOff } from './time-budget.ts';

/** What every step of one run reads and updates. */
export interface Run<Tx> {
  deps: SweepDeps<Tx>;
  opts: ResolvedSweepOptions;
  logger: KitLogger | undefined;
  signal: AbortSignal | undefined;
  startedAt: number;
  /** The clock of the budget (opts.monotonicNow; performance.now unless the deps give one). */
  clock: () => number;
  /** No read starts after this (by `clock`); the rest of the budget finishes what started. */
  readsEndAt: number;
  /**
   * Gives up a read still unanswered when the run's budget, finishing time included, is over (one
   * timer for the run, not one per read). Every read starts before `readsEndAt`, so each gets at
   * least the finishing time.
   */
  readsCutOff: ReadsCutOff;
  report: SweepReport;
  /** Asks the store to also write outcome events (only when an onOutcome hook is set). */
  event: OutcomeRecording | undefined;
  committer: FulfilCommitter<Tx>;
  /** Read permits: the pace every sweep process shares after a 429, and the cap. */
  pacer: Pacer;
  /** Fulfilments handed to the committer and not yet settled. */
  applying: Set<Promise<void>>;
  /**
   * The last fulfilment handed over per user and action, until it settles. Attempts of one user and
   * action commit in the order they were read, never in one group, so a group never applies an older
   * attempt that a newer one read before it would have superseded.
   */
  lastOfIntent: Map<string, Promise<void>>;
  /** Still-pending attempts whose next check is not written yet (written a batch at a time). */
  reschedules: NextCheck[];
  /** Claimed attempts not yet started, most overdue last (pop); the next batch is claimed ahead. */
  claimed: Attempt[];
  /** When each claimed attempt's lease ends (the run's clock); an entry goes with its attempt. */
  leaseEnds: WeakMap<Attempt, number>;
  exhausted: boolean;
  claiming: Promise<void> | undefined;
  /** Whether the reads reach the service: none answering stops them. */
  answers: ReadAnswers;
  /** Claimed attempts that crossed the 24 h line before their read: expired after the checks. */
  tooOld: number;
  /**
   * The sessions this run read that have not settled. One due again before the run ends (a short
   * backoff, the quick retry) is claimed again once its reschedule is written: it is set aside,
   * never read twice. A settled one is never claimed again, so it leaves the set: the run's memory
   * follows what is still pending, not every attempt it read.
   */
  readThisRun: Set<string>;
  /** Claimed attempts set aside as read already: still leased, handed back at the run's end. */
  setAside: number;
}

export function startRun<Tx>(deps: SweepDeps<Tx>, opts: ResolvedSweepOptions, options: SweepOptions): Run<Tx> {
  // The run's warnings go to its own logger, else to the kit's; a throwing logger never stops a check.
  const logger = safeLogger(options.logger ?? deps.logger);
  const clock = opts.monotonicNow;
  const startedAt = clock();
  const logged = { ...deps, logger: safeLogger(deps.logger) ?? logger };
  const budget = runBudget(opts.timeBudgetMs, deps.hookTimeouts);
  // Every step of the run reaches the store and the callbacks through these: bounded by the budget.
  const bounded = withinBudget(logged, startedAt, budget, clock);
  const pacer = createPacer({
    store: bounded.store,
    cap: opts.maxReadsPerSecond,
    signal: options.signal,
    deadline: Date.now() + budget.readingMs,
  });
  return {
    deps: bounded,
    opts,
    logger,
    signal: options.signal,
    startedAt,
    clock,
    readsEndAt: startedAt + budget.readingMs,
    readsCutOff: readsCutOff(startedAt, budget, clock),
    report: emptyReport(opts.owner),
    event: deps.onOutcome === undefined ? undefined : { source: 'sweep' },
    // Two groups in flight at the default concurrency of 4: one works while the other waits for its commit.
    committer: groupCommitter(bounded.store, {
      maxGroup: opts.batchSize,
      parallel: Math.ceil(opts.concurrency / 2),
      gatherMs: () => gatherWindowMs(pacer.readsPerSecond(), opts.batchSize, opts.leaseMs),
    }),
    pacer,
    applying: new Set(),
    lastOfIntent: new Map(),
    reschedules: [],
    claimed: [],
    leaseEnds: new WeakMap(),
    exhausted: false,
    claiming: undefined,
    answers: readAnswers(opts.concurrency),
    readThisRun: new Set(),
    setAside: 0,
    tooOld: 0,
  };
}
