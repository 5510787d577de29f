/**
 * The forms of a page, each with what a browser submits when the user presses its first submit
 * button: the HTML Standard's "constructing the entry list", read with html.ts's tag reader. A
 * control the browser leaves out (disabled, unchecked, a button not pressed) is left out, and a
 * control outside the form that names it with `form=` is in.
 */
import { attribute, decodeHtml, TAG_REST } from './html.ts';

/**
 * One entry a form submits: its name and value, and `'file'` for a file input's (a file with no
 * name and no content, as no file was chosen).
 */
export type FormEntry = [name: string, value: string] | [name: string, value: string, kind: 'file'];

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

/**
 * One token of a page: a comment or other markup declaration (no group), or a tag: group 1 `/` for
 * an end tag, group 2 its name, group 3 its attribute text.
 */
const TOKEN = new RegExp(
  `<!--(?:-?>|[\\s\\S]*?--!?>|[\\s\\S]*$)|<[!?][^>]*(?:>|$)|</(?![A-Za-z])[^>]*(?:>|$)|<(/?)([A-Za-z][^\\s/>]*)${TAG_REST}`,
  'g',
);

/** Elements whose content is text to their end tag, never tags (a form in a script is no form). */
const TEXT_ONLY = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes']);

/** Where a text-only element's content ends: its end tag, or the page's end. */
function textEnd(html: string, from: number, name: string): { end: number; after: number } {
  const close = new RegExp(`</${name}(?=[\\s/>])[^>]*(?:>|$)`, 'gi');
  close.lastIndex = from;
  const found = close.exec(html);
  return found === null ? { end: html.length, after: html.length } : { end: found.index, after: close.lastIndex };
}

interface Option {
  attributes: string;
  text: string;
  disabled: boolean;
}

interface Control {
  tag: 'input' | 'button' | 'select' | 'textarea';
  attributes: string;
  /** Where it is written in the page: its tag (a textarea or select to its end). */
  start: number;
  end: number;
  /** Its own `disabled`, or inside a disabled fieldset (not in its first legend), or inside a datalist. */
  barred: boolean;
  /** The form it sits in as the page is parsed (undefined: none). */
  parsedIn: number | undefined;
  options: Option[];
  text: string;
}

interface FormSpan {
  attributes: string;
  bodyStart: number;
  bodyEnd: number;
  start: number;
  end: number;
}

interface Fieldset {
  disabled: boolean;
  legendSeen: boolean;
  inFirstLegend: boolean;
}

/** The page's forms and every control, in tree order, and the first element of each id. */
interface PageControls {
  forms: FormSpan[];
  controls: Control[];
  /** id → the form of that id (its index), or -1 when the first element of that id is no form. */
  ids: Map<string, number>;
}

const has = (attributes: string, name: string) => attribute(attributes, name) !== undefined;

/** The parser's state that decides what a control is in: its form, fieldsets, datalist, select and option. */
class PageReader implements PageControls {
  readonly forms: FormSpan[] = [];
  readonly controls: Control[] = [];
  readonly ids = new Map<string, number>();
  private readonly fieldsets: Fieldset[] = [];
  private open: number | undefined;
  private datalists = 0;
  private select: Control | undefined;
  private option: Option | undefined;
  private optgroupDisabled = false;

  constructor(private readonly html: string) {}

  /** Adds a page's text (between two tags) to the option it is in, if any. */
  text(from: number, to: number): void {
    if (this.option !== undefined) this.option.text += this.html.slice(from, to);
  }

  start(name: string, attributes: string, at: number, end: number): void {
    const id = attribute(attributes, 'id');
    if (id !== undefined && !this.ids.has(id))
      this.ids.set(id, name === 'form' && this.open === undefined ? this.forms.length : -1);
    // Inside a select only options and groups are read; a new control ends it, as the parser does.
    if (['input', 'select', 'textarea', 'keygen'].includes(name)) this.closeSelect(at);
    if (this.select === undefined || ['option', 'optgroup'].includes(name)) this.option = undefined;
    if (name === 'form' && this.open === undefined) {
      this.open = this.forms.length;
      this.forms.push({ attributes, bodyStart: end, bodyEnd: this.html.length, start: at, end: this.html.length });
    } else if (name === 'fieldset') {
      this.fieldsets.push({ disabled: has(attributes, 'disabled'), legendSeen: false, inFirstLegend: false });
    } else if (name === 'legend') this.legend();
    else if (name === 'datalist') this.datalists += 1;
    else if (name === 'input' || name === 'button') this.control(name, attributes, at, end);
    else if (name === 'select') this.select = this.control('select', attributes, at, this.html.length);
    else if (name === 'optgroup' && this.select !== undefined) this.optgroupDisabled = has(attributes, 'disabled');
    else if (name === 'option' && this.select !== undefined) {
      this.option = { attributes, text: '', disabled: this.optgroupDisabled || has(attributes, 'disabled') };
      this.select.options.push(this.option);
    }
  }

  end(name: string, at: number, end: number): void {
    if (['option', 'optgroup', 'select'].includes(name)) this.option = undefined;
    if (name === 'form' && this.open !== undefined) {
      const form = this.forms[this.open] as FormSpan;
      form.bodyEnd = at;
      form.end = end;
      this.open = undefined;
    } else if (name === 'fieldset') this.fieldsets.pop();
    else if (name === 'legend') this.fieldsets.forEach((f) => (f.inFirstLegend = false));
    else if (name === 'datalist') this.datalists = Math.max(0, this.datalists - 1);
    else if (name === 'select') this.closeSelect(end);
    else if (name === 'optgroup') this.optgroupDisabled = false;
  }

  textarea(attributes: string, text: string, at: number, end: number): void {
    // The parser drops a newline right after <textarea>.
    this.control('textarea', attributes, at, end).text = text.replace(/^\r?\n|^\r/, '');
  }

  /** The open select ends here (its end tag, or a control the parser ends it for). */
  private closeSelect(end: number): void {
    if (this.select !== undefined) this.select.end = end;
    this.select = undefined;
  }

  /** A fieldset's first legend: what is in it stays usable when the fieldset is disabled. */
  private legend(): void {
    const innermost = this.fieldsets.at(-1);
    if (innermost === undefined || innermost.legendSeen) return;
    innermost.legendSeen = true;
    innermost.inFirstLegend = true;
  }

  private control(tag: Control['tag'], attributes: string, start: number, end: number): Control {
    const barred =
      has(attributes, 'disabled') || this.datalists > 0 || this.fieldsets.some((f) => f.disabled && !f.inFirstLegend);
    const made = { tag, attributes, start, end, barred, parsedIn: this.open, options: [], text: '' };
    this.controls.push(made);
    return made;
  }
}

/** Reads the page once, tag by tag, as a browser's parser builds it, for what its forms submit. */
function readPage(html: string): PageControls {
  const reader = new PageReader(html);
  let textFrom = 0;
  TOKEN.lastIndex = 0;
  for (let token = TOKEN.exec(html); token !== null; token = TOKEN.exec(html)) {
    const [, slash, written, attributes = ''] = token;
    reader.text(textFrom, token.index);
    textFrom = TOKEN.lastIndex;
    if (written === undefined) continue;
    const name = written.toLowerCase();
    if (slash === '/') {
      reader.end(name, token.index, TOKEN.lastIndex);
      continue;
    }
    reader.start(name, attributes, token.index, TOKEN.lastIndex);
    // A `/>` does not end these either: a browser reads their text to the end tag.
    if (TEXT_ONLY.has(name)) {
      const { end, after } = textEnd(html, TOKEN.lastIndex, name);
      if (name === 'textarea') reader.textarea(attributes, html.slice(TOKEN.lastIndex, end), token.index, after);
      TOKEN.lastIndex = after;
      textFrom = after;
    }
  }
  reader.text(textFrom, html.length);
  return reader;
}

/** The form a control belongs to: the form its `form=` names (none if that id is no form), else the one it sits in. */
function ownerOf(control: Control, ids: Map<string, number>): number | undefined {
  const named = attribute(control.attributes, 'form');
  if (named === undefined) return control.parsedIn;
  const form = ids.get(named);
  return form === undefined || form < 0 ? undefined : form;
}

/** An input's type as a browser reads it: any case, an unknown one is `text`. */
const INPUT_TYPES = new Set(
  'hidden text search tel url email password date month week time datetime-local number range color checkbox radio file submit image reset button'.split(
    ' ',
  ),
);
function inputType(attributes: string): string {
  const type = (attribute(attributes, 'type') ?? '').toLowerCase();
  return INPUT_TYPES.has(type) ? type : 'text';
}

function buttonType(attributes: string): string {
  const type = (attribute(attributes, 'type') ?? '').toLowerCase();
  return type === 'reset' || type === 'button' ? type : 'submit';
}

/** A button a user presses to send the form. */
function isSubmitButton(control: Control): boolean {
  if (control.tag === 'button') return buttonType(control.attributes) === 'submit';
  return control.tag === 'input' && ['submit', 'image'].includes(inputType(control.attributes));
}

/** Types whose value loses its line breaks (and, for url and email, its outer spaces) as the browser sanitises it. */
const ONE_LINE = new Set(['text', 'search', 'tel', 'password', 'url', 'email']);
const VALID_NUMBER = /^-?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** An input's value as the browser keeps it (its value sanitisation, where it is simple). */
function inputValueOf(type: string, written: string): string {
  if (type === 'number') return VALID_NUMBER.test(written) ? written : '';
  if (!ONE_LINE.has(type)) return written;
  const oneLine = written.replace(/[\r\n]/g, '');
  return type === 'url' || type === 'email' ? oneLine.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '') : oneLine;
}

/** An option's value: its `value`, or its text with spaces collapsed. */
function optionValue(option: Option): string {
  return (
    attribute(option.attributes, 'value') ??
    decodeHtml(option.text.replace(/<[^>]*>/g, ''))
      .replace(/[\t\n\f\r ]+/g, ' ')
      .trim()
  );
}

/** The options a select submits: those selected (the last, for a single select) or its first usable one. */
function selectedOptions(select: Control): Option[] {
  const selected = select.options.filter((o) => has(o.attributes, 'selected'));
  const multiple = has(select.attributes, 'multiple');
  const size = Number(attribute(select.attributes, 'size') ?? '1');
  const chosen = multiple ? selected : selected.slice(-1);
  if (chosen.length === 0 && !multiple && !(size > 1)) return select.options.filter((o) => !o.disabled).slice(0, 1);
  return chosen.filter((o) => !o.disabled);
}

/** The entries one control adds to the list ([] when the browser leaves it out). */
function entriesOf(control: Control, submitter: Control | undefined, checkedRadio: Map<string, Control>): FormEntry[] {
  const { tag, attributes } = control;
  const name = attribute(attributes, 'name') ?? '';
  const type = tag === 'input' ? inputType(attributes) : tag === 'button' ? buttonType(attributes) : tag;
  if (type === 'image') {
    if (control !== submitter) return [];
    const prefix = name === '' ? '' : `${name}.`;
    return [
      [`${prefix}x`, '0'],
      [`${prefix}y`, '0'],
    ];
  }
  if (isSubmitButton(control) && control !== submitter) return [];
  if (type === 'reset' || type === 'button' || name === '') return [];
  if (type === 'checkbox' && !has(attributes, 'checked')) return [];
  if (type === 'radio' && checkedRadio.get(name) !== control) return [];
  if (tag === 'select') return selectedOptions(control).map((option) => [name, optionValue(option)]);
  if (type === 'file') return [[name, '', 'file']];
  const value =
    tag === 'textarea'
      ? decodeHtml(control.text)
      : type === 'checkbox' || type === 'radio'
        ? (attribute(attributes, 'value') ?? 'on')
        : type === 'hidden' && name.toLowerCase() === '_charset_'
          ? 'UTF-8'
          : inputValueOf(type, attribute(attributes, 'value') ?? '');
  const dirname = ONE_LINE.has(type) || tag === 'textarea' ? attribute(attributes, 'dirname') : undefined;
  return dirname === undefined || dirname === ''
    ? [[name, value]]
    : [
        [name, value],
        [dirname, 'ltr'],
      ];
}

/** A line break in a submitted name or value is sent as CR LF. */
const crlf = (text: string) => text.replace(/\r\n|\r|\n/g, '\r\n');

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
