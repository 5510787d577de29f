/**
 * What a text the audit quotes spells, its percent-encoded characters decoded as the kit decodes a
 * path part (a URL inside a parameter, encoded again, decoded to the end): a number whose digits
 * are escapes (`%30%37…`) is judged by its digits, and masked as written around it.
 */
import { spelledPart } from '../../middleware/numbers/mask-number.ts';

/** One character percent-encoded as UTF-8, once or again: "%30", "%EF%BC%90", "%2530". */
const ENCODED_CHARACTER = /%(?:25)*[\da-f]{2}(?:%(?:25)*[89ab][\da-f])*/gi;

/** What `escapes` spell, decoded until nothing more decodes; a malformed escape stays as written. */
function fullySpelled(escapes: string): string {
  let spelled = escapes;
  for (let next = spelledPart(spelled); next !== spelled; next = spelledPart(spelled)) spelled = next;
  return spelled;
}

/** `text` as it spells: each percent-encoded character decoded to the end, a malformed escape as written. */
export function spelledText(text: string): string {
  return text.replace(ENCODED_CHARACTER, fullySpelled);
}

/**
 * `text` with each match of `pattern` (a global one) in what the text spells replaced by
 * `replace(match)`, the escapes a match covers replaced whole; a match `replace` spares
 * (`undefined`) and the rest are kept as written.
 */
export function replaceInSpelled(
  text: string,
  pattern: RegExp,
  replace: (spelled: string) => string | undefined,
): string {
  if (!/%[\da-f]{2}/i.test(text)) return text.replace(pattern, (found) => replace(found) ?? found);
  // For each character spelled, where the characters written for it start and end.
  const writtenStart: number[] = [];
  const writtenEnd: number[] = [];
  let spelled = '';
  let at = 0;
  const spell = (characters: string, start: number, end: number) => {
    for (let i = 0; i < characters.length; i += 1) {
      writtenStart.push(start);
      writtenEnd.push(end);
    }
    spelled += characters;
  };
  for (const escapes of text.matchAll(ENCODED_CHARACTER)) {
    for (; at < escapes.index; at += 1) spell(text.charAt(at), at, at + 1);
    at += escapes[0].length;
    spell(fullySpelled(escapes[0]), escapes.index, at);
  }
  for (; at < text.length; at += 1) spell(text.charAt(at), at, at + 1);

  let shown = '';
  let written = 0;
  for (const found of spelled.matchAll(pattern)) {
    const replacement = replace(found[0]);
    if (found[0] === '' || replacement === undefined) continue;
    const start = Math.max(written, writtenStart[found.index] ?? written);
    shown += text.slice(written, start) + replacement;
    written = writtenEnd[found.index + found[0].length - 1] ?? text.length;
  }
  return shown + text.slice(written);
}
