/**
 * What a text the audit quotes spells, its percent-encoded characters decoded as the kit decodes a
 * path part (a URL inside a parameter, encoded again, decoded to the end), and what it shows, its
 * character references decoded too: a number whose digits are escapes (`%30%37…`) or references
 * (`&#48;&#55;…`) is judged by its digits, and masked as written around it.
 */
import { spelledPart } from '../../middleware/numbers/mask-number.ts';
import { htmlReferences } from '../html.ts';

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

/** A text as it reads, with where the characters written for each of its characters start and end. */
export interface ReadText {
  text: string;
  start: number[];
  end: number[];
}

/** One run of `text` read as another: where it is written, as written, and what it reads as. */
export interface ReadRun {
  at: number;
  written: string;
  text: string;
}

/** `text` read with each of `runs` (in order, none overlapping) as what it reads as, the rest as written. */
export function readWith(text: string, runs: Iterable<ReadRun>): ReadText {
  const read: ReadText = { text: '', start: [], end: [] };
  const spell = (characters: string, start: number, end: number) => {
    for (let i = 0; i < characters.length; i += 1) {
      read.start.push(start);
      read.end.push(end);
    }
    read.text += characters;
  };
  let at = 0;
  for (const run of runs) {
    for (; at < run.at; at += 1) spell(text.charAt(at), at, at + 1);
    at = run.at + run.written.length;
    spell(run.text, run.at, at);
  }
  for (; at < text.length; at += 1) spell(text.charAt(at), at, at + 1);
  return read;
}

/** `text` as it spells (`spelledText`), with where each character spelled is written. */
export function spelledPlaces(text: string): ReadText {
  return readWith(
    text,
    [...text.matchAll(ENCODED_CHARACTER)].map((found) => ({
      at: found.index,
      written: found[0],
      text: fullySpelled(found[0]),
    })),
  );
}

/** `outer`, read from `inner.text`, with its places in what `inner` was read from. */
export function readThrough(inner: ReadText, outer: ReadText): ReadText {
  return {
    text: outer.text,
    start: outer.start.map((at) => inner.start[at] ?? at),
    end: outer.end.map((at) => inner.end[at - 1] ?? at),
  };
}

/** `text` as a browser shows it, with where each character is written: its character references decoded, then its percent escapes. */
export function shownPlaces(text: string): ReadText {
  const references = readWith(text, htmlReferences(text));
  return readThrough(references, spelledPlaces(references.text));
}
