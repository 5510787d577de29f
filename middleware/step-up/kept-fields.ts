/**
 * The fields of a guarded form as the kit keeps them while its user confirms it's them (JSON), or a
 * refusal of what no store can keep: a NUL byte or a lone surrogate (PostgreSQL's JSONB) or more than 64 KB; and the
 * fields a confirmed form runs with, as the store gives them back.
 */
import type { Request } from 'express';
import { KitError, KitErrorCode } from '../errors.ts';
import { bodyOf } from '../routes/start-request.ts';
import { mayBePhoneNumber } from '../numbers/mask-number.ts';
import { isRecord } from '../options/option-problems.ts';
import type { StepUpIntent } from '../store/types.ts';
import type { JsonValue } from '../types.ts';
import { isPageMethod, methodOf } from './request-kind.ts';
import { LONE_SURROGATE } from './resource-key.ts';

/** A kept form is at most this large (as JSON, in the UTF-8 bytes a store keeps). */
const KEPT_FIELDS_LIMIT = 64 * 1024;

/** A body parsed into fields (an object of its own, not text, bytes or a list), or none at all. */
function isFieldsOrNone(body: unknown): boolean {
  if (body === undefined) return true;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const prototype: unknown = Object.getPrototypeOf(body);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A NUL, or a lone UTF-16 surrogate (a latin-1 form's `&#55296;` under a parser that reads numeric
 * entities): PostgreSQL's JSONB refuses either, so such a form would fail there and be kept elsewhere.
 */
function cannotKeep(text: string): boolean {
  return text.includes('\0') || LONE_SURROGATE.test(text);
}

/** The fields a form was sent with, as the kit keeps them (JSON); refuses what cannot be kept. */
export function keptFields(req: Request): JsonValue {
  if (isPageMethod(methodOf(req))) return {};
  // Read as text or bytes by the app's own parser (express.text or express.raw for every type): kept
  // as no fields, the handler would later run with the confirmation's body instead of the form's.
  if (!isFieldsOrNone(req.body)) {
    throw new KitError(
      KitErrorCode.InvalidActionParams,
      'This form was read by the app before the guard as something other than fields (text or bytes), so it cannot be kept while the user confirms it is them: parse urlencoded forms into fields before the guard.',
    );
  }
  let unkeepable = false;
  const text = JSON.stringify(bodyOf(req), (key, value: unknown) => {
    unkeepable ||= cannotKeep(key) || (typeof value === 'string' && cannotKeep(value));
    return value;
  });
  // No form sends one, and PostgreSQL cannot keep it (JSONB): refused on every store alike.
  if (unkeepable) {
    throw new KitError(
      KitErrorCode.InvalidActionParams,
      'This form holds a character that cannot be kept; go back and try again.',
    );
  }
  // Bytes, not characters: a character may take three (`中`), so 64 K of them would keep 192 KB.
  if (Buffer.byteLength(text, 'utf8') > KEPT_FIELDS_LIMIT) {
    throw new KitError(
      KitErrorCode.InvalidActionParams,
      'This form is too large to be kept while you confirm it is you.',
    );
  }
  return JSON.parse(text) as JsonValue;
}

/**
 * The fields a confirmed form runs with, as the store gave them back. A store of the app's own may
 * answer the JSON text it stored: the handler must never run with that as its body.
 */
export function fieldsToRun(intent: StepUpIntent): Record<string, unknown> {
  if (isRecord(intent.fields)) return intent.fields;
  throw new KitError(
    KitErrorCode.HookFailed,
    "The step-up store's findIntent answered a kept form whose fields are not an object (JSON text not parsed?); nothing was run.",
  );
}

/** A file upload: kept requests hold form fields only. */
export function uploadRefused(): KitError {
  return new KitError(
    KitErrorCode.StepUpUploadRefused,
    'A form with a file cannot be kept while you confirm it is you.',
  );
}

/**
 * A body the kit cannot read as form fields (`text/plain`, XML): kept, it would run empty. Its type
 * is the sender's text, named back unless it may hold a number.
 */
export function bodyTypeRefused(req: Request): KitError {
  const type = (req.get('content-type') ?? 'none').split(';', 1)[0]?.slice(0, 100) ?? '';
  const sentAs = mayBePhoneNumber(type) ? 'with a body type that may hold a number' : `as ${JSON.stringify(type)}`;
  return new KitError(
    KitErrorCode.InvalidActionParams,
    `A form sent ${sentAs} cannot be kept while you confirm it is you: only a urlencoded form can.`,
  );
}
