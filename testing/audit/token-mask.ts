/**
 * The tokens the audit's users hold (their start tokens, the step-up intents the app handed them,
 * their attempts' session ids and states) are masked in what the audit reports, as its numbers are:
 * evidence quoting a URL (a start sent as a GET, a landing, a Location) would print them.
 */
import { formsIn } from '../html-forms.ts';
import type { Exchange } from './agent.ts';

export type TokenKind = 'start token' | 'step-up intent' | 'session id' | 'state';

/** A value shorter than this is no token to mask (masking it would garble ordinary text). */
const MIN_TOKEN_CHARS = 8;

/**
 * How many of a token's first characters mark it: followed by any token characters, so a token
 * cut short (a state missing its last character) or lengthened (a wrong token made from the right
 * one) is masked too.
 */
const ANCHOR_CHARS = 16;

/** What may follow a token's anchor: the characters of a token, as is or URL-encoded. */
const TOKEN_REST = String.raw`[\w\-.~%+/=]*`;

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

export class TokenMask {
  constructor(
    /** Only the app's answers hand the audit's users step-up intents. */
    private readonly appOrigin: string,
  ) {}

  /** Each spelling's anchor, with what it masks. */
  readonly #anchors = new Map<string, { kind: TokenKind; token: string }>();
  #pattern: RegExp | undefined;

  /** Masks `token` from now on, as is and URL-encoded. */
  add(kind: TokenKind, token: string): void {
    if (token.length < MIN_TOKEN_CHARS) return;
    for (const spelling of [token, encodeURIComponent(token), new URLSearchParams({ t: token }).toString().slice(2)]) {
      const anchor = spelling.slice(0, ANCHOR_CHARS);
      if (this.#anchors.has(anchor)) continue;
      this.#anchors.set(anchor, { kind, token });
      this.#pattern = undefined;
    }
  }

  /** Masks an attempt's session id and state from now on. */
  addAttempt(attempt: { sessionId: string; state: string }): void {
    this.add('session id', attempt.sessionId);
    this.add('state', attempt.state);
  }

  /** `exchange`, the step-up intents the app handed out in it masked from now on. */
  holding(exchange: Exchange): Exchange {
    for (const intent of intentsIn(exchange, this.appOrigin)) this.add('step-up intent', intent);
    return exchange;
  }

  /** `text` with every token held, in any of its spellings, shown by its kind and its last two characters. */
  mask(text: string): string {
    if (this.#anchors.size === 0) return text;
    this.#pattern ??= new RegExp(
      [...this.#anchors.keys()].map((anchor) => `${escaped(anchor)}${TOKEN_REST}`).join('|'),
      'g',
    );
    return text.replace(this.#pattern, (found) => {
      const held = this.#anchors.get(found.slice(0, ANCHOR_CHARS)) ?? this.#heldStarting(found);
      return held === undefined ? found : `[a ${held.kind} ending ${held.token.slice(-2)}]`;
    });
  }

  /** The token a match of a short token's whole spelling (under ANCHOR_CHARS) starts with. */
  #heldStarting(found: string): { kind: TokenKind; token: string } | undefined {
    for (const [anchor, held] of this.#anchors) if (found.startsWith(anchor)) return held;
    return undefined;
  }
}

/** The step-up intents an answer of the app hands its user: a Location's `intent`, a form's `intent` field. */
export function intentsIn(exchange: Exchange, appOrigin: string): string[] {
  if (!exchange.url.startsWith(appOrigin)) return [];
  const intents: string[] = [];
  const location = exchange.responseHeaders.location;
  if (location !== undefined) {
    try {
      intents.push(...new URL(location, exchange.url).searchParams.getAll('intent'));
    } catch {
      // A Location that is no URL hands out nothing.
    }
  }
  const html = /text\/html/i.test(exchange.responseHeaders['content-type'] ?? '');
  if (html && exchange.responseBody.includes('intent')) {
    for (const form of formsIn(exchange.responseBody)) {
      for (const [name, value] of form.entries) if (name === 'intent') intents.push(value);
    }
  }
  return intents;
}
