/**
 * What one control of a form adds to the entry list a browser submits: by its type, its value as
 * the browser sanitises it, a select's chosen options, a pressed image button's coordinates.
 */
import { attribute, decodeHtml } from './html.ts';
import { has, type Control, type Option } from './html-page-controls.ts';

/**
 * One entry a form submits: its name and value, and `'file'` for a file input's (a file with no
 * name and no content, as no file was chosen).
 */
export type FormEntry = [name: string, value: string] | [name: string, value: string, kind: 'file'];

/** An input's type as a browser reads it: any case, an unknown one is `text`. */
const INPUT_TYPES = new Set(
  'hidden text search tel url email password date month week time datetime-local number range color checkbox radio file submit image reset button'.split(
    ' ',
  ),
);
export function inputType(attributes: string): string {
  const type = (attribute(attributes, 'type') ?? '').toLowerCase();
  return INPUT_TYPES.has(type) ? type : 'text';
}

function buttonType(attributes: string): string {
  const type = (attribute(attributes, 'type') ?? '').toLowerCase();
  return type === 'reset' || type === 'button' ? type : 'submit';
}

/** A button a user presses to send the form. */
export function isSubmitButton(control: Control): boolean {
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
export function entriesOf(
  control: Control,
  submitter: Control | undefined,
  checkedRadio: Map<string, Control>,
): FormEntry[] {
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
export const crlf = (text: string) => text.replace(/\r\n|\r|\n/g, '\r\n');
