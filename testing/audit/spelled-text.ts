/**
 * Replacing what a text the audit quotes shows (read as the kit's shown-text reads it): a number whose
 * digits are escapes (`%30%37…`) or references (`&#48;&#55;…`) is judged by its digits, and masked
 * as written around it.
 */
import { shownPlaces } from '../../middleware/shown-text.ts';

/**
 * `text` with each match of `pattern` (a global one) in what the text shows replaced by
 * `replace(match)`, the references and escapes a match covers replaced whole; a match `replace`
 * spares (`undefined`) and the rest are kept as written. What it shows is what a browser shows:
 * its character references decoded, then its percent escapes (`shownPlaces`).
 */
export function replaceInSpelled(
  text: string,
  pattern: RegExp,
  replace: (spelled: string) => string | undefined,
): string {
  if (!/%[\da-f]{2}|&/i.test(text)) return text.replace(pattern, (found) => replace(found) ?? found);
  const { text: spelled, start: writtenStart, end: writtenEnd } = shownPlaces(text);
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
