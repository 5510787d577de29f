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
const TOKEN_CHARACTER = /[\w\-.~%+/=]/;

/** Where the run of token characters from `at` ends. */
function tokenEnd(text: string, at: number): number {
  let end = at;
  while (end < text.length && TOKEN_CHARACTER.test(text[end] as string)) end++;
  return end;
}

interface Held {
  kind: TokenKind;
  token: string;
  /** The order it was added in: of two anchors at one place, the first added is the one found. */
  order: number;
}

export class TokenMask {
  constructor(
    /** Only the app's answers hand the audit's users step-up intents. */
    private readonly appOrigin: string,
  ) {}

  /** Each spelling's anchor, with what it masks. */
  readonly #anchors = new Map<string, Held>();
  /** The anchors' lengths, longest first: a text is looked up by its part of each length at each place. */
  #lengths: number[] = [];

  /** Masks `token` from now on, as is and URL-encoded. */
  add(kind: TokenKind, token: string): void {
    if (token.length < MIN_TOKEN_CHARS) return;
    for (const spelling of [token, encodeURIComponent(token), new URLSearchParams({ t: token }).toString().slice(2)]) {
      const anchor = spelling.slice(0, ANCHOR_CHARS);
      if (this.#anchors.has(anchor)) continue;
      this.#anchors.set(anchor, { kind, token, order: this.#anchors.size });
      if (!this.#lengths.includes(anchor.length))
        this.#lengths = [...this.#lengths, anchor.length].sort((a, b) => b - a);
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

  /**
   * `text` with every token held, in any of its spellings, shown by its kind and its last two
   * characters: from the first place an anchor starts at, through the token characters after it.
   * Each place is looked up in the anchors (one lookup per anchor length), so the cost follows the
   * text's length, not the number of tokens held (an audit holds a thousand or more).
   */
  mask(text: string): string {
    if (this.#anchors.size === 0) return text;
    let out = '';
    let from = 0;
    for (let at = 0; at < text.length;) {
      const anchor = this.#anchorAt(text, at);
      if (anchor === undefined) {
        at++;
        continue;
      }
      const end = tokenEnd(text, at + anchor.length);
      const found = text.slice(at, end);
      const held = this.#anchors.get(found.slice(0, ANCHOR_CHARS)) ?? this.#heldStarting(found);
      if (held !== undefined) {
        out += `${text.slice(from, at)}[a ${held.kind} ending ${held.token.slice(-2)}]`;
        from = end;
      }
      at = end;
    }
    return from === 0 ? text : out + text.slice(from);
  }

  /** The anchor that starts at `at`, the first added of those that do. */
  #anchorAt(text: string, at: number): string | undefined {
    let first: { anchor: string; order: number } | undefined;
    for (const length of this.#lengths) {
      if (at + length > text.length) continue;
      const part = text.slice(at, at + length);
      const held = this.#anchors.get(part);
      if (held !== undefined && (first === undefined || held.order < first.order))
        first = { anchor: part, order: held.order };
    }
    return first?.anchor;
  }

  /** The token a match of a short token's whole spelling (under ANCHOR_CHARS) starts with. */
  #heldStarting(found: string): Held | undefined {
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
