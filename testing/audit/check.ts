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

/** An attempt whose effects must still be `expected` once the run is over, and what its evidence says of it. */
export interface LaterCount {
  sessionId: string;
  expected: number;
  what: string;
}

/** What a check saw: failed expectations, and notes kept as evidence either way. */
export class Verdict {
  readonly failures: string[] = [];
  readonly notes: string[] = [];
  /** Counted again when the run is over: an effect a job or a hook makes after the answer counts too. */
  readonly laterCounts: LaterCount[] = [];
  /** Why the check could not be tried (an option it needs is absent), if so: reported as not run, never as passed. */
  notRun: string | undefined;

  /**
   * Counts the attempt's effects again once the run is over. Only for an attempt nothing legitimate
   * will run later: never one verified and not landed, which the sweep fulfils.
   */
  countAgainLater(sessionId: string, expected: number, what: string): void {
    this.laterCounts.push({ sessionId, expected, what });
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
