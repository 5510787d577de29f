/**
 * The client secret as it may be spelt where it leaks, and the scrubbing of everything the audit
 * reports: "The client secret appears only in the Authorization header", so the audit's own
 * evidence, report and output never quote it in any encoding either.
 */
import { secretSpellings, type SecretSpelling } from '../../middleware/secret-spellings.ts';

/** One spelling of the secret: what it is called in evidence, and the text searched for. */
export type SecretForm = SecretSpelling;

/**
 * Every spelling searched for and scrubbed: the kit's own list (the one its redaction removes), with
 * the Basic credentials of `clientId`.
 */
export function secretForms(clientId: string, secret: string): SecretForm[] {
  return secretSpellings(secret, clientId);
}

/** The first spelling of the secret found in `text`, if any. */
export function findSecret(forms: readonly SecretForm[], text: string): SecretForm | undefined {
  return forms.find((form) => text.includes(form.text));
}

const MARK = '[client secret]';

/**
 * `text` with every spelling of the secret replaced, and any tail that is the start of one (a
 * value cut short) replaced too.
 */
export function scrubSecret(forms: readonly SecretForm[], text: string): string {
  let out = text;
  for (const form of [...forms].sort((a, b) => b.text.length - a.text.length)) out = out.split(form.text).join(MARK);
  for (const form of forms) {
    for (let length = Math.min(form.text.length - 1, out.length); length >= 8; length--) {
      if (out.endsWith(form.text.slice(0, length))) {
        out = `${out.slice(0, out.length - length)}${MARK}`;
        break;
      }
    }
  }
  return out;
}
