/** What a check is, and the small helpers checks share to judge and to explain what they saw. */
import { randomBytes } from 'node:crypto';
import { decodeHtml } from '../html.ts';
import type { Answer } from './agent.ts';
import type { AuditWorld } from './world.ts';

/**
 * When a check may run: 'concurrent' beside others (it reads only its own users' attempts),
 * 'alone' (it reads the emulator's global counters or moves the shared clock), 'last' (it reads
 * everything the run recorded).
 */
export type CheckPhase = 'concurrent' | 'alone' | 'last';

export interface AuditCheck {
  /** Stable: CI and the adapters name checks by it. */
  id: string;
  title: string;
  /** The fix, in one sentence, shown when the check fails. */
  fix: string;
  phase: CheckPhase;
  run(world: AuditWorld, verdict: Verdict): Promise<void>;
}

/** A count that must still read `expected` once the checks' work has settled (a job or a hook may act after the answer). */
export interface LaterCount {
  /** What is counted, for the evidence when it cannot be read again: `s1's effects`. */
  what: string;
  expected: number;
  read(world: AuditWorld): Promise<number>;
  /** The evidence when it reads `count` instead. */
  failure(count: number): string;
  /** A count every user adds to (the emulator's): read again before the next check runs, not at the end of the run. */
  shared?: boolean;
}

/** What a check saw: failed expectations, and notes kept as evidence either way. */
export class Verdict {
  readonly failures: string[] = [];
  readonly notes: string[] = [];
  /** Counted again once the work settled: an effect a job or a hook makes after the answer counts too. */
  readonly laterCounts: (LaterCount & { readAt: number })[] = [];
  /** Why the check could not be tried (an option it needs is absent), if so: reported as not run, never as passed. */
  notRun: string | undefined;

  /** Reads `count` again once the work settled: at the end of the run, or right after the check for a shared count. */
  countLater(count: LaterCount): void {
    // When it was read: the work it waits for was set off before then.
    this.laterCounts.push({ ...count, readAt: Date.now() });
  }

  /**
   * Counts the attempt's effects again once the run is over. Only for an attempt nothing legitimate
   * will run later: never one verified and not landed, which the sweep fulfils.
   */
  countAgainLater(sessionId: string, expected: number, what: string): void {
    this.countLater({
      what: `${sessionId}'s effects`,
      expected,
      read: (world) => world.effects(sessionId),
      failure: (count) =>
        `${what}: by the end of the run the action had run ${count} time(s) for it (expected ${expected}; an effect your app made after its answer, in a job or a hook, counts too)`,
    });
  }

  /**
   * Reads the emulator's count of SMS sent again once the check is done (and before the next one
   * runs) and expects it still `sent`: a job or a hook set off by a request may text after its answer.
   */
  countTextsAgainLater(sent: number, what: string): void {
    this.countLater({
      what: 'the SMS sent',
      expected: sent,
      read: async (world) => (await world.control.stats()).smsSent,
      failure: (count) =>
        `${what}: ${count - sent} SMS more were sent after their answers (a job or a hook your app ran after the answer counts too)`,
      shared: true,
    });
  }

  expect(ok: boolean, failure: string): boolean {
    if (!ok) this.failures.push(failure);
    return ok;
  }

  note(line: string): void {
    this.notes.push(line);
  }
}

/** How many redirects after an answer are followed (on the app's origin only). */
export const MAX_HOPS = 6;

/** A state-shaped random value (43 base64url characters), as the kit makes them. */
export function randomState(): string {
  return randomBytes(32).toString('base64url');
}

/** The longest page name quoted in evidence. */
const PAGE_NAME_CHARS = 80;

/**
 * Which page an HTML answer showed, by its title (or its first heading when it has none): a status
 * alone does not tell the guard's "Confirm it's you" page from the route's own.
 */
export function pageName(answer: Answer): string | undefined {
  if (!/text\/html/i.test(answer.headers['content-type'] ?? '')) return undefined;
  const found =
    /<title[^>]*>([\s\S]*?)<\/title>/i.exec(answer.body)?.[1] ?? /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(answer.body)?.[1];
  const text = decodeHtml((found ?? '').replace(/<[^>]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();
  if (text === '' || text.length <= PAGE_NAME_CHARS) return text === '' ? undefined : text;
  // Cut between words, never inside one: a cut word the secret starts would keep a part of it too
  // short for the scrub to tell. A title without a space to cut at is not quoted.
  const cut = text.lastIndexOf(' ', PAGE_NAME_CHARS);
  return cut <= 0 ? '...' : `${text.slice(0, cut)} ...`;
}

/**
 * `/path?query answered 200 (page "Title")`, or `... answered 303 -> /there`, for evidence (the
 * runner scrubs and shortens every evidence line).
 */
export function describeAnswer(answer: Answer): string {
  const url = new URL(answer.url);
  const page = pageName(answer);
  const seen = page === undefined ? '' : ` (page "${page}")`;
  const where = answer.location === null ? '' : ` -> ${answer.location}`;
  return `${url.pathname}${url.search} answered ${answer.status}${seen}${where}`;
}

export function isRefused(answer: Answer): boolean {
  return answer.status >= 400 && answer.status < 500;
}

/**
 * Expects a forged or refused landing: a 4xx, no redirect, and no effect for any of `sessionIds`;
 * those of `never` (attempts never verified) are counted again once the run is over.
 */
export async function expectNoEffect(
  world: AuditWorld,
  verdict: Verdict,
  sessionIds: string[],
  why: string,
  never: readonly string[] = [],
): Promise<void> {
  for (const sessionId of sessionIds) {
    const count = await world.effects(sessionId);
    verdict.expect(count === 0, `${why}: the action ran ${count} time(s) for ${sessionId}`);
    if (never.includes(sessionId)) verdict.countAgainLater(sessionId, 0, `${why} (${sessionId})`);
  }
}
