/**
 * A tiny auto-escaping HTML template tag: every interpolated value is escaped unless it is already
 * SafeHtml (the result of another `html` call or an explicit `unsafeRaw`). Arrays are joined.
 */

/** HTML already escaped (or written by the kit): kept as is by `html`. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes a value for HTML text and attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => ESCAPES[c as keyof typeof ESCAPES]);
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map((v: HtmlValue) => render(v)).join('');
  return escapeHtml(String(value));
}

/** A tagged template that escapes every value (SafeHtml values are kept as they are). */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  // A template has one more string than values: each string after the first follows values[i - 1].
  return new SafeHtml(strings.reduce((out, text, i) => out + render(values[i - 1]) + text));
}

/** Marks a string as HTML without escaping it. Only for markup the kit itself wrote. */
export function unsafeRaw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/**
 * A JSON value safe to place inside an inline <script>: `<`, `>`, `&` and the JS line separators
 * are escaped so the value can never close the script element.
 */
export function scriptJson(value: unknown): SafeHtml {
  return new SafeHtml(
    JSON.stringify(value)
      .replace(/</g, '\\u003c')
      .replace(/>/g, '\\u003e')
      .replace(/&/g, '\\u0026')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029'),
  );
}
