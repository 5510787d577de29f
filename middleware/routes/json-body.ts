/**
 * The JSON body parser of the kit's own routes (the mobile start and completion). `JSON.parse`
 * keeps the last of a key given twice, while a proxy or a firewall in front may read the first: a
 * body that names a key twice is refused, as the landing refuses a parameter given twice. That
 * check reads the body as UTF-8, so a body declared in any other charset (which Express's parser
 * would decode, UTF-16 or UTF-7, hiding a key given twice from it) is refused too.
 */
import express, { type Request, type RequestHandler } from 'express';
import { KitError, KitErrorCode } from '../errors.ts';

/**
 * Whether a parser the app mounted before the kit has read this JSON body: the request's stream
 * is used up (`_body` is how Express 4's body-parser marks it), so the kit cannot see the text.
 */
function readBefore(req: Request): boolean {
  if (req.is('application/json') !== 'application/json') return false;
  return (req as Request & { _body?: unknown })._body === true || req.readableEnded;
}

/**
 * The text of a body another parser read, where that parser kept it: Google Cloud Functions and
 * Firebase set `req.rawBody`, and so does the verify hook apps add for signed webhooks.
 */
function keptText(req: Request): string | undefined {
  const raw = (req as Request & { rawBody?: unknown }).rawBody;
  if (Buffer.isBuffer(raw)) return raw.toString('utf8');
  return typeof raw === 'string' ? raw : undefined;
}

/** Why the kit's JSON parser refused a body: said in the log, never to the client. */
export class BodyRefused extends Error {
  override readonly name = 'BodyRefused';
}

const KEY_TWICE = 'The JSON body names a key twice.';
const NOT_UTF8 = 'The JSON body must be UTF-8 (Content-Type: application/json, with no charset or charset=utf-8).';

/**
 * Whether every charset the Content-Type names is UTF-8 (none names it: JSON's own, RFC 8259).
 * Cut at every ";", even one inside quotes: a header this misreads names something else, refused.
 */
export function declaresUtf8(contentType: string | undefined): boolean {
  return (contentType ?? '')
    .split(';')
    .slice(1)
    .every((parameter) => {
      const at = parameter.indexOf('=');
      if (at === -1 || parameter.slice(0, at).trim().toLowerCase() !== 'charset') return true;
      return (
        parameter
          .slice(at + 1)
          .trim()
          .replace(/^"(.*)"$/, '$1')
          .toLowerCase() === 'utf-8'
      );
    });
}

/**
 * express.json, strict, that fails (before parsing) on a body naming one key twice in an object.
 * A body another parser read first is judged by the text that parser kept (`req.rawBody`), and
 * refused when it kept none: the text, where a key given twice shows, is gone.
 */
export function strictJson(limit: string): RequestHandler {
  const parse = express.json({
    limit,
    strict: true,
    // `encoding` is the charset the parser decodes with: the text checked must be the text parsed.
    verify: (_req, _res, raw, encoding) => {
      if (encoding !== 'utf-8') throw new BodyRefused(NOT_UTF8);
      if (namesAKeyTwice(raw.toString('utf8'))) throw new BodyRefused(KEY_TWICE);
    },
  });
  return (req, res, next) => {
    if (req.is('application/json') === 'application/json' && !declaresUtf8(req.get('content-type'))) {
      next(new BodyRefused(NOT_UTF8));
      return;
    }
    if (!readBefore(req)) {
      parse(req, res, next);
      return;
    }
    const kept = keptText(req);
    if (kept !== undefined) {
      next(namesAKeyTwice(kept) ? new BodyRefused(KEY_TWICE) : undefined);
      return;
    }
    next(
      new KitError(
        KitErrorCode.InvalidOptions,
        `${req.path}: the JSON body was read by a parser mounted before the kit (express.json()?), and kept no req.rawBody, so a key given twice cannot be refused; mount the kit before express.json(), or mount express.json() on your own routes only.`,
      ),
    );
  };
}

/** True when an object in this JSON text names one key twice (after unescaping: "a" and "\u0061" are one). */
export function namesAKeyTwice(text: string): boolean {
  // One set of keys per open object, null per open array.
  const open: (Set<string> | null)[] = [];
  let keyNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = closingQuote(text, i);
      if (keyNext) {
        const keys = open.at(-1);
        const key = decoded(text.slice(i, end + 1));
        if (keys instanceof Set && key !== undefined) {
          if (keys.has(key)) return true;
          keys.add(key);
        }
        keyNext = false;
      }
      i = end;
    } else if (c === '{') {
      open.push(new Set());
      keyNext = true;
    } else if (c === '[') {
      open.push(null);
    } else if (c === '}' || c === ']') {
      open.pop();
    } else if (c === ',') {
      keyNext = open.at(-1) instanceof Set;
    }
  }
  return false;
}

/** Where the string opened at `start` closes (the text's end when it never does). */
function closingQuote(text: string, start: number): number {
  let j = start + 1;
  while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
  return Math.min(j, text.length - 1);
}

/** A JSON string literal's value, or undefined when it is not one (JSON.parse refuses the body anyway). */
function decoded(literal: string): string | undefined {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return undefined;
  }
}

/** The log's reason for a body the parsers refused: the kit's own refusal, or what failed. */
export function bodyProblem(error: unknown, otherwise = 'The request body is not valid JSON.'): string {
  return error instanceof BodyRefused ? error.message : otherwise;
}
