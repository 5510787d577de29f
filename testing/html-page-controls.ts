/**
 * A page read once, tag by tag, as a browser's parser builds it: its forms, every control with
 * what bars it (disabled, a disabled fieldset, a datalist), and the form each control belongs to.
 */
import { attribute, TAG_REST } from './html.ts';

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

export interface Option {
  attributes: string;
  text: string;
  disabled: boolean;
}

export interface Control {
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

export interface FormSpan {
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
export interface PageControls {
  forms: FormSpan[];
  controls: Control[];
  /** id → the form of that id (its index), or -1 when the first element of that id is no form. */
  ids: Map<string, number>;
}

export const has = (attributes: string, name: string) => attribute(attributes, name) !== undefined;

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
export function readPage(html: string): PageControls {
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
export function ownerOf(control: Control, ids: Map<string, number>): number | undefined {
  const named = attribute(control.attributes, 'form');
  if (named === undefined) return control.parsedIn;
  const form = ids.get(named);
  return form === undefined || form < 0 ? undefined : form;
}
