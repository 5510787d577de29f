/**
 * The forms of a page, each with what a browser submits when the user presses its first submit
 * button: the HTML Standard's "constructing the entry list", read with html.ts's tag reader. A
 * control the browser leaves out (disabled, unchecked, a button not pressed) is left out, and a
 * control outside the form that names it with `form=` is in.
 */
import { attribute } from './html.ts';
import { crlf, entriesOf, inputType, isSubmitButton, type FormEntry } from './html-form-entries.ts';
import { has, ownerOf, readPage, type Control, type FormSpan } from './html-page-controls.ts';

export type { FormEntry } from './html-form-entries.ts';

export interface HtmlForm {
  /** Where it goes: the pressed button's `formaction`, or the form's `action`, as written (decoded, not resolved). */
  action: string;
  /** `get`, `post` or `dialog` (the pressed button's `formmethod`, or the form's `method`; `get` when absent or unknown). */
  method: string;
  /** How a `post` body is encoded: the pressed button's `formenctype`, or the form's `enctype` (urlencoded when absent or unknown). */
  enctype: string;
  /** The opening tag's attribute text, and the form's inner HTML. */
  attributes: string;
  body: string;
  /** Everything it submits, in document order: a name given twice is there twice. */
  entries: FormEntry[];
  /** The first value of each name (a view of `entries` for a name given once). */
  fields: Record<string, string>;
}

/** `get`, `post` or `dialog` as written in any case; anything else is `get`. */
function methodOf(written: string | undefined): string {
  const method = (written ?? 'get').toLowerCase();
  return ['get', 'post', 'dialog'].includes(method) ? method : 'get';
}

const ENCTYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];

/** An enctype as written in any case; anything else is urlencoded. */
function enctypeOf(written: string | undefined): string {
  const enctype = (written ?? '').toLowerCase();
  return ENCTYPES.includes(enctype) ? enctype : 'application/x-www-form-urlencoded';
}

/** A name's first value, for each name of the entries. */
function firstValues(entries: FormEntry[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of entries) if (!Object.hasOwn(fields, name)) fields[name] = value;
  return fields;
}

/** One form as submitted by pressing its first submit button a user can press. */
function readForm(html: string, span: FormSpan, controls: Control[]): HtmlForm {
  const usable = controls.filter((c) => !c.barred);
  const submitter = usable.find(isSubmitButton);
  // Of the radios of one name, the last checked is the one checked.
  const checkedRadio = new Map<string, Control>();
  for (const c of usable) {
    if (c.tag === 'input' && inputType(c.attributes) === 'radio' && has(c.attributes, 'checked'))
      checkedRadio.set(attribute(c.attributes, 'name') ?? '', c);
  }
  const entries = usable
    .flatMap((c) => entriesOf(c, submitter, checkedRadio))
    .map(([name, value, ...file]): FormEntry => [crlf(name), crlf(value), ...file]);
  const pressed = (name: string) => (submitter === undefined ? undefined : attribute(submitter.attributes, name));
  return {
    action: pressed('formaction') ?? attribute(span.attributes, 'action') ?? '',
    method: methodOf(pressed('formmethod') ?? attribute(span.attributes, 'method')),
    enctype: enctypeOf(pressed('formenctype') ?? attribute(span.attributes, 'enctype')),
    attributes: span.attributes,
    body: html.slice(span.bodyStart, span.bodyEnd),
    entries,
    fields: firstValues(entries),
  };
}

/** Every form of a page, in order, with where it and the controls joined to it with `form=` are written. */
function formsWithSpans(html: string): { form: HtmlForm; spans: { start: number; end: number }[] }[] {
  const { forms, controls, ids } = readPage(html);
  return forms.map((span, index) => {
    const owned = controls.filter((c) => ownerOf(c, ids) === index);
    const outside = owned.filter((c) => c.start < span.start || c.start >= span.end);
    return { form: readForm(html, span, owned), spans: [span, ...outside] };
  });
}

/** Every form of a page, in order. */
export function formsIn(html: string): HtmlForm[] {
  return formsWithSpans(html).map(({ form }) => form);
}

/**
 * The page without the forms `drop` picks (each read as `formsIn` reads it), and without the
 * controls outside them that join them with `form=`; the rest as it was.
 */
export function withoutForms(html: string, drop: (form: HtmlForm) => boolean): string {
  const dropped = formsWithSpans(html)
    .filter(({ form }) => drop(form))
    .flatMap(({ spans }) => spans)
    .sort((a, b) => a.start - b.start);
  let kept = '';
  let from = 0;
  for (const span of dropped) {
    // A span inside one already dropped (a select's end past a form's) is gone with it.
    if (span.end <= from) continue;
    kept += html.slice(from, Math.max(from, span.start));
    from = span.end;
  }
  return kept + html.slice(from);
}
