/**
 * A text written character by character as a browser still shows it: HTML character references
 * (hex or decimal) or every byte percent-encoded, as the audit's secret tests write the secret.
 */
const characters = (text: string) => [...text].map((c) => c.codePointAt(0) as number);

export const hexReferences = (text: string) =>
  characters(text)
    .map((n) => `&#x${n.toString(16)};`)
    .join('');

export const decimalReferences = (text: string) =>
  characters(text)
    .map((n) => `&#${n};`)
    .join('');

export const everyCharacterEscaped = (text: string) =>
  [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
