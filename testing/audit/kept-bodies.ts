/**
 * What a run keeps of the answers' bodies for the checks that read them at its end (the leak
 * checks, the entered-number search, the files the pages load): whole, up to KEPT_BODY_CHARS in
 * all. Past it, a body is searched for the client secret and its page's files are listed as it is
 * read, and only that is kept: an app whose pages are megabytes never runs the audit out of
 * memory, and a check that searches bodies for a value learnt later says those it could not.
 */
import type { Exchange } from './agent.ts';
import { secretSpellingIn, type SecretForm } from './secret.ts';
import { pageFilesOf } from './subresources.ts';

/** What is kept of a body past the run's bound: what the checks read of it, worked out as it was read. */
export interface UnkeptBody {
  /** Its length (characters). */
  chars: number;
  /** Which spelling of the client secret (or 12 characters of one) it held, if any. */
  secret: string | undefined;
  /** The files on the app's origin its page has the browser load (none unless it is one of the app's pages). */
  files: string[];
}

/** An exchange as the run keeps it: past the bound, its body is '' and `unkeptBody` is set. */
export type KeptExchange = Exchange & { unkeptBody?: UnkeptBody };

/** The most body text one run keeps (characters; 32 MB of a page in ASCII). */
export const KEPT_BODY_CHARS = 32 * 1024 * 1024;

const MB = 1024 * 1024;

export class BodyBudget {
  #kept = 0;

  constructor(
    private readonly secretForms: readonly SecretForm[],
    private readonly appOrigin: string,
    private readonly limit = KEPT_BODY_CHARS,
  ) {}

  /**
   * `exchange` as the run keeps it: whole while the bound allows, else with what the checks read of
   * its body (the client secret's spelling in it, its page's files) in place of the body. Changed in
   * place: the agent that read it keeps the same object.
   */
  keep(exchange: KeptExchange): KeptExchange {
    const body = exchange.responseBody;
    if (this.#kept + body.length <= this.limit) {
      this.#kept += body.length;
      return exchange;
    }
    exchange.unkeptBody = {
      chars: body.length,
      secret: secretSpellingIn(this.secretForms, body, true),
      files: pageFilesOf(exchange, this.appOrigin),
    };
    exchange.responseBody = '';
    return exchange;
  }
}

/** The evidence line saying which bodies past the bound were not searched for `what`, if any were. */
export function unkeptSaid(unkept: readonly UnkeptBody[], what: string): string | undefined {
  if (unkept.length === 0) return undefined;
  const chars = unkept.reduce((sum, body) => sum + body.chars, 0);
  return `${unkept.length} answer bod${unkept.length === 1 ? 'y' : 'ies'} (${(chars / MB).toFixed(1)} MB) past the ${KEPT_BODY_CHARS / MB} MB of bodies a run keeps not searched for ${what} (searched for the client secret as read)`;
}
