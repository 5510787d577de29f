/**
 * A script reading the page's query as parameters and sending the browser on: one that takes the
 * parameters whole (`Object.fromEntries`, a loop over them, a spread) reads the planted ?next= even
 * when it also reads another parameter by name, and is an exit; one that reads each parameter by a
 * name it spells (`.get('lang')`), at once or through the name it keeps them in, is judged by
 * those names alone.
 */
import { describe, expect, it } from 'vitest';
import { plantedUrlRead } from '../../testing/audit/url-reads.ts';

const URL_WITH_PLANT = 'http://localhost:3000/done?next=https%3A%2F%2Fevil.example%2Faudit&lang=en';
const PLANTED = ['https://evil.example/audit', '//evil.example'];
const read = (script: string) => plantedUrlRead(script, [URL_WITH_PLANT], PLANTED);

describe('plantedUrlRead and the ways a script sends the browser on', () => {
  it.each([
    ['window.open', "const to = new URLSearchParams(location.search).get('next'); if (to) window.open(to, '_self');"],
    [
      'open, the window implied',
      "const to = new URLSearchParams(location.search).get('next'); if (to) open(to, '_self');",
    ],
    [
      'navigation.navigate',
      "const to = new URLSearchParams(location.search).get('next'); if (to) navigation.navigate(to);",
    ],
  ])("%s to the page's ?next= reads the planted parameter", (_, script) => {
    expect(read(script)).toBe('its parameter next');
  });

  it('a request opened with xhr.open, beside a read of ?next=, sends the browser nowhere', () => {
    const script =
      "const to = new URLSearchParams(location.search).get('next'); const x = new XMLHttpRequest(); x.open('GET', to);";
    expect(read(script)).toBeUndefined();
  });
});

describe('plantedUrlRead and the URL read as text', () => {
  it.each([
    [
      'location.href split',
      "const next = location.href.split('next=')[1]; if (next) location.assign(decodeURIComponent(next));",
    ],
    [
      'location.toString() matched',
      'const m = /next=([^&]*)/.exec(location.toString()); if (m) location = decodeURIComponent(m[1]);',
    ],
    [
      'String(location) matched',
      'const m = String(window.location).match(/next=([^&]*)/); if (m) location.replace(decodeURIComponent(m[1]));',
    ],
  ])('%s is a read of every parameter', (_, script) => {
    expect(read(script)).toBe('read without naming a parameter');
  });

  it('a location.href set from a value of the page, the URL never read, sends the browser on by no planted value', () => {
    expect(read('const to = document.body.dataset.next; if (to) location.href = to;')).toBeUndefined();
  });

  it.each([
    [
      'a share button opening another site with the page URL',
      "share.onclick = () => window.open('https://twitter.com/intent/tweet?url=' + encodeURIComponent(location.href), '_blank');",
    ],
    [
      'a share button as a template literal',
      'share.onclick = () => open(`https://www.facebook.com/sharer.php?u=${encodeURIComponent(location.href)}`);',
    ],
    [
      'a search of the app with the page URL',
      "location.assign('/search?from=' + encodeURIComponent(location.href) + '&q=' + box.value);",
    ],
  ])('%s, its origin written first, sends the browser to no planted value', (_, script) => {
    expect(read(script)).toBeUndefined();
  });

  it.each([
    ["a path's slash alone written first", "location.assign('/' + location.href.split('next=')[1]);"],
    ['a scheme without its host written first', "location.assign('https:' + location.href.split('next=/')[1]);"],
    ['a host not ended in the text', "location.assign('https://app.example' + location.href.split('next=')[1]);"],
  ])('%s still sends the browser on by a planted value', (_, script) => {
    expect(read(script)).toBe('read without naming a parameter');
  });
});

describe('plantedUrlRead and parameters taken whole', () => {
  it.each([
    [
      'Object.fromEntries of the query, beside a read of ?lang= by name',
      "const p = Object.fromEntries(new URLSearchParams(location.search)); document.documentElement.lang = new URLSearchParams(location.search).get('lang'); if (p.next) location = p.next;",
    ],
    [
      'Object.fromEntries of the parameters kept in a name also read by name',
      "const q = new URLSearchParams(location.search); const lang = q.get('lang'); const all = Object.fromEntries(q); location.assign(all.next);",
    ],
    [
      'a destructured Object.fromEntries of the URL parsed whole',
      "const { next } = Object.fromEntries(new URL(location.href).searchParams); document.title = new URLSearchParams(location.search).get('lang'); location.href = next;",
    ],
    [
      'a spread of the parameters into an array',
      "const q = new URLSearchParams(location.search); const lang = q.get('lang'); const pairs = [...q]; location.replace(pairs[0][1]);",
    ],
  ])('%s is read as every parameter', (_, script) => {
    expect(read(script)).toBe('read without naming a parameter');
  });

  it.each([
    [
      'read by name at once',
      "const lang = new URLSearchParams(location.search).get('lang') || 'en'; location.replace('/' + lang + '/done');",
    ],
    [
      'kept in a name whose every use reads ?lang= by name',
      "const q = new URLSearchParams(location.search); document.title = q.get('lang'); if (q.has('lang')) location.replace('/' + q.get('lang'));",
    ],
  ])('a script reading only ?lang= (%s) sends the browser on by no planted value', (_, script) => {
    expect(read(script)).toBeUndefined();
  });
});

describe('plantedUrlRead and a location read through another spelling', () => {
  it.each([
    ['taken apart', "const { search } = window.location; location.assign(new URLSearchParams(search).get('next'));"],
    [
      'taken apart under another name',
      "const { search: q = '' } = location; location.assign(new URLSearchParams(q).get('next'));",
    ],
    [
      'kept under another name',
      "const loc = window.location; loc.assign(new URLSearchParams(loc.search).get('next'));",
    ],
    ['in brackets', "location.assign(new URLSearchParams(location['search']).get('next'));"],
    ['optionally', "location.assign(new URLSearchParams(window.location?.search).get('next'));"],
  ])("%s, the query's ?next= read sends the browser to the planted value", (_, script) => {
    expect(read(script)).toBe('its parameter next');
  });

  it('a rest taken apart from the location is a read of the URL whole', () => {
    expect(read("const { pathname, ...rest } = location; location.replace(rest.href.split('next=')[1]);")).toBe(
      'read without naming a parameter',
    );
  });

  it('taken apart and read only by a name the planted value is not in, it sends the browser by no planted value', () => {
    expect(
      read("const { search } = location; location.assign('/' + new URLSearchParams(search).get('lang'));"),
    ).toBeUndefined();
  });
});
