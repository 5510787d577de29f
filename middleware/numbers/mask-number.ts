/** The one way the kit shows a number anywhere but the form it was typed into. */
import { isIPv4, isIPv6 } from 'node:net';

/**
 * "+15550100001" -> "•• 01" (a no-break space between): its last two digits, as people read a
 * number they know; enough for a user to recognise it, not to text it.
 */
export function maskDestination(destination: string): string {
  return `••\u00a0${destination.slice(-2)}`;
}

/** The fewest digits a phone number has with its country code (Niue's +683 4002). */
export const FEWEST_NUMBER_DIGITS = 7;

/** A prefix an IPv4 address may have: 0 to 32, without a leading zero. */
const IPV4_PREFIX = /^(?:[12]?\d|3[0-2])$/;

/**
 * Whether a value is a whole IPv4 address (four parts of 0 to 255), with a prefix of one (`/16`).
 * Its start ("203.0.113"), a part past 255 ("612.345.678") or a prefix past 32 is no address: the
 * grouping of a number the kit reads ("251.23.45", a German one). The audit's masking spares the same.
 */
export function isIpv4Address(value: string): boolean {
  const [address = '', prefix, ...more] = value.split('/');
  return more.length === 0 && isIPv4(address) && (prefix === undefined || IPV4_PREFIX.test(prefix));
}

/**
 * Whether a value is a whole IPv6 address, `[v6]` with a port or bare with a zone or a prefix:
 * its start ("0740:0123:456") is a number's grouping.
 */
function isIpv6Address(value: string): boolean {
  const bracketed = /^\[([^\]]*)\](?::\d{1,5})?$/.exec(value)?.[1];
  const bare = bracketed ?? value.replace(/\/\d{1,3}$/, '');
  return isIPv6(bare.replace(/%[\w.-]*$/, ''));
}

/**
 * Whether a value is an IPv4 address and a port ("0.0.0.0:43159", a URL's host): the kit reads no
 * number with a colon, and a message quoting an app's address must show it as written.
 */
function isIpv4WithPort(value: string): boolean {
  const [, address = '', port] = /^(.+):(\d{1,5})$/.exec(value) ?? [];
  return port !== undefined && isIPv4(address) && Number(port) <= 65535;
}

/** Whether a value may be a phone number: as many digits as one, and no whole IP address (with a port or not). */
export function mayBePhoneNumber(value: string): boolean {
  const digits = value.match(/\p{Nd}/gu)?.length ?? 0;
  return digits >= FEWEST_NUMBER_DIGITS && !isIpv4Address(value) && !isIpv4WithPort(value) && !isIpv6Address(value);
}

/** A path part that may be one group of a number, once decoded: digits, a leading `+`, the marks between groups. */
const NUMBER_GROUP = /^[\p{Nd} ().+-]+$/u;

/**
 * What a path part spells: a browser may send any character percent-encoded ("%30" is "0"), so a
 * part is judged decoded. A run of escapes that is no UTF-8 keeps its ASCII ones decoded and the
 * rest as written: a malformed escape never throws. The audit's masking reads its quotes so too.
 */
export function spelledPart(part: string): string {
  return part.replace(/(?:%[\da-f]{2})+/gi, (escapes) => {
    try {
      return decodeURIComponent(escapes);
    } catch {
      return escapes.replace(/%([0-7][\da-f])/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    }
  });
}

/**
 * A number's first group glued to a scheme or a word ("tel:07400", "call+44-7400"), once decoded:
 * the group after the part's last other character, starting with a `+` or a bracket or holding three
 * digits, so a version or a quarter ("v2", "q3") is no group.
 */
const GLUED_FIRST_GROUP = /[^\p{Nd} ().+-]([ .-]*(?:[+(]|\p{Nd}{3})[\p{Nd} ().+-]*)$/u;

/**
 * A number's last group with a word glued after it ("123456.json", "123456).html"), once decoded:
 * the part's digits and marks up to its first other character.
 */
const GLUED_LAST_GROUP = /^([\p{Nd} ().+-]*\p{Nd})[ ().-]*[^\p{Nd} ().+-]/u;

/**
 * A path with each run of adjacent parts that together may be a phone number masked whole: a number
 * grouped by slashes ("/call/07400/123456") leaves each part too short to be one. Runs of fewer
 * digits than a number stay as written ("/orders/2024/11"), as parts between words do. An empty
 * part (a doubled slash, "/07400//123456") is no word: it ends no run, and a run ends before it. A
 * part with a word glued to a first group ("/tel:07400/123456") starts a run: its group is read.
 * One with a word glued after a last group ("/07400/123456.json") ends a run that is then a number.
 */
function maskGroupsAcrossSlashes(pathname: string): string {
  const shown: string[] = [];
  let run: string[] = [];
  let spelledRun: string[] = [];
  let emptyAfterRun: string[] = [];
  const endRun = () => {
    const spelled = spelledRun.join('/');
    if (spelledRun.length > 1 && mayBePhoneNumber(spelled)) shown.push(maskDestination(spelled));
    else shown.push(...run);
    shown.push(...emptyAfterRun);
    run = [];
    spelledRun = [];
    emptyAfterRun = [];
  };
  const addToRun = (part: string, group: string) => {
    run.push(...emptyAfterRun, part);
    spelledRun.push(group);
    emptyAfterRun = [];
  };
  for (const part of pathname.split('/')) {
    const spelled = spelledPart(part);
    if (part === '' && run.length > 0) {
      emptyAfterRun.push(part);
    } else if (NUMBER_GROUP.test(spelled) && /\p{Nd}/u.test(spelled)) {
      addToRun(part, spelled);
    } else {
      const lastGroup = run.length > 0 ? GLUED_LAST_GROUP.exec(spelled)?.[1] : undefined;
      if (lastGroup !== undefined && mayBePhoneNumber([...spelledRun, lastGroup].join('/'))) {
        addToRun(part, lastGroup);
        endRun();
        continue;
      }
      endRun();
      const firstGroup = GLUED_FIRST_GROUP.exec(spelled)?.[1];
      if (firstGroup === undefined) shown.push(part);
      else [run, spelledRun] = [[part], [firstGroup]];
    }
  }
  endRun();
  return shown.join('/');
}

/**
 * A request path shown on a page, each part that may be a phone number masked ("/phones/•• 23"),
 * and each number grouped across parts, in the path or in a value of its query ("?to=07400/123456"):
 * a full number appears only where the user typed it. A part is judged by what it spells, and
 * masked whole as written.
 */
export function maskNumbersInPath(path: string): string {
  const queryAt = path.includes('?') ? path.indexOf('?') : path.length;
  const query = path.slice(queryAt).replace(/[^?&=;]+/g, maskGroupsAcrossSlashes);
  const grouped = maskGroupsAcrossSlashes(path.slice(0, queryAt)) + query;
  return grouped.replace(/[^/?&=;]+/g, (part) => {
    const spelled = spelledPart(part);
    return mayBePhoneNumber(spelled) ? maskDestination(spelled) : part;
  });
}

/**
 * Marks between a number's groups that no key, hash or base64 holds: full-width brackets, dots,
 * slashes, plus and dashes (as Chinese and Japanese keyboards type them), dashes of any width,
 * tildes and the katakana long mark, all of which the kit reads between digits.
 */
const WIDE_MARKS =
  '\\uff08\\uff09\\uff3b\\uff3d\\uff0e\\uff0f\\uff0b\\uff0d\\uff5e\\u2010-\\u2015\\u2212\\u2053\\u223c\\u30fc';
/**
 * What separates a number's groups as the kit reads a typed number: spaces, brackets, dots,
 * slashes, dashes, a plus, WIDE_MARKS, and format marks (a soft hyphen, a zero-width space, the
 * direction marks a copied number is wrapped in). The contents of a character class of a `u`
 * pattern: the audit finds a number shown in full by the same marks.
 */
export const GROUP_MARKS = `\\s().\\/+\\-~\\[\\]${WIDE_MARKS}\\p{Cf}`;
/** CJK punctuation a number is written before or after without a space: 、。，：；！？ */
const CJK_PUNCTUATION = '\\u3001\\u3002\\uff0c\\uff1a\\uff1b\\uff01\\uff1f';
/** Scripts written without spaces, whose words a number is glued to ("手机号15550001111未注册"); no key holds them. */
const UNSPACED_SCRIPTS = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}\\p{Script=Thai}';
/** Where a URL's part or a query's value starts or ends (`/users/+1555…`, `?phone=1555…&region=`), and `#` (customer #1555…). */
const URL_PARTS = '\\/?&#';
/**
 * What a number standing as a word may follow: a space, a quote or an opening bracket of any
 * script, punctuation, a wide mark, a URL's part, a word of a script written without spaces. Not a
 * Latin letter, a digit, `_`, `-`, `+` or `.`: a token's.
 */
const BEFORE_A_NUMBER = `\\s"'\`([{<,;:=|~\\p{Ps}\\p{Pi}\\p{Pf}\\p{Cf}${WIDE_MARKS}${CJK_PUNCTUATION}${UNSPACED_SCRIPTS}${URL_PARTS}`;
/**
 * What it may precede: a space, a quote or a closing bracket of any script, punctuation ending a
 * phrase, a wide mark; and `@`, as an address keyed by a number is written (a WhatsApp id
 * "447700900123@s.whatsapp.net", "sip:+447700900123@carrier").
 */
const AFTER_A_NUMBER = `\\s"'\`)\\][}>,;:.!?|~@\\p{Pe}\\p{Pi}\\p{Pf}\\p{Cf}${WIDE_MARKS}${CJK_PUNCTUATION}${UNSPACED_SCRIPTS}${URL_PARTS}`;

/**
 * A group mark percent-encoded, as `encodeURIComponent` and URLSearchParams write a number in a URL
 * (`%2B44%207400%20123456`): a space, a plus, brackets, a dash, a slash.
 */
const ENCODED_MARK = '%2[0BbDdFf89]';
/** A space or punctuation percent-encoded (`%20` to `%2F`, `%3A` to `%3F`): what a number stands beside in a URL. */
const ENCODED_PUNCTUATION = '%2[0-9A-Fa-f]|%3[A-Fa-f]';
const ENCODED_MARKS = new RegExp(ENCODED_MARK, 'g');
const DECODED_MARK: Record<string, string> = { '0': ' ', b: '+', d: '-', f: '/', '8': '(', '9': ')' };

/** How many marks may stand between a number and what it follows or precedes ("+.44…", "…456/ "). */
const EDGE_MARKS = 4;

/**
 * A run of a number's characters in a text, standing as a word of its own: a digit of any script,
 * then digits and the marks between groups (GROUP_MARKS), ending on a digit; a leading plus or
 * bracket (full-width too) with it, and up to EDGE_MARKS marks on either side. Glued to a Latin
 * letter, a digit, `_`, `-`, `+` or `.` it is part of a token (a key, a hash, base64): masked, a
 * secret's digits would leave its rest unrecognised by a redaction that looks for it whole. At most
 * 32 characters, so a text of any size is read once.
 */
const NUMBER_RUN = new RegExp(
  // Punctuation or a space percent-encoded in a URL (`?phone%3D%2B1555…%20was`) stands around one too.
  `(?<=(?:^|[${BEFORE_A_NUMBER}]|${ENCODED_PUNCTUATION})[${GROUP_MARKS}]{0,${EDGE_MARKS}})` +
    `(?:[+\\uff0b(\\uff08]|${ENCODED_MARK})?\\p{Nd}(?:(?:[\\p{Nd}${GROUP_MARKS}]|${ENCODED_MARK}){0,30}\\p{Nd})?` +
    `(?=[${GROUP_MARKS}]{0,${EDGE_MARKS}}(?:$|[${AFTER_A_NUMBER}]|${ENCODED_PUNCTUATION}))`,
  'gu',
);

/**
 * A text (an error's message) with each run that may be a phone number masked ("no page for •• 11"),
 * as a path part is: seven digits or more, grouped or not, that are no whole IP address. A long
 * numeric id or a date with its time in the text is masked too; an address, a port, a count or a
 * duration stays.
 */
export function maskNumbersInText(text: string): string {
  return text.replace(NUMBER_RUN, (run) => {
    // Read with its percent-encoded marks decoded: their hex digits are none of the number's.
    const read = run.replace(ENCODED_MARKS, (mark) => DECODED_MARK[mark.slice(2).toLowerCase()] ?? ' ');
    return mayBePhoneNumber(read) ? maskDestination(read) : run;
  });
}

/** What a message says instead of a value that may be a phone number. */
export const NOT_REPEATED = 'a value not repeated here, as it may be a phone number';

/**
 * A value an error message names back (a country, an address), quoted, unless it may be a phone
 * number: a number typed where another value goes is never repeated.
 */
export function quotedUnlessNumber(value: string): string {
  return mayBePhoneNumber(value) ? NOT_REPEATED : JSON.stringify(value);
}

/** A value an error message names back unquoted (a count, hours), unless it may be a phone number. */
export function namedUnlessNumber(value: unknown): string {
  const text = String(value);
  return mayBePhoneNumber(text) ? NOT_REPEATED : text;
}
