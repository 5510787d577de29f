/**
 * The README and the documents it links are what npm shows and what `node_modules` holds, so every
 * link in them must work for someone who never cloned the repository: a relative link names a file
 * the tarball ships (so it works in the repository, on the registry's page and inside
 * `node_modules`); a link into the repository (source folders) is absolute and names a file or
 * folder the repository holds; `#anchors` name a heading of the page they point into.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './scratch.ts';

const REPOSITORY = 'https://github.com/hosted-sms-verify-kit/hosted-sms-verify-kit';
const RAW = 'https://raw.githubusercontent.com/hosted-sms-verify-kit/hosted-sms-verify-kit/main/';
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  repository: { url: string };
  homepage: string;
  bugs: { url: string };
};

/** What `npm pack` puts in the tarball (without building: no link points into dist/). */
const shipped = new Set(
  (
    JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    ) as [{ files: { path: string }[] }]
  )[0].files.map((file) => file.path),
);
const tracked = new Set(execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n'));

/** Every link target outside fenced code: markdown links and images, and HTML href/src. */
function links(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '');
  return [
    ...[...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!),
    ...[...prose.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]!),
  ];
}

/** GitHub's anchor for a heading. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(file: string): Set<string> {
  return new Set(
    readFileSync(join(ROOT, file), 'utf8')
      .replace(/```[\s\S]*?```/g, '')
      .split('\n')
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => slug(line.replace(/^#+ /, ''))),
  );
}

const holds = (files: Set<string>, path: string) =>
  path === '' || files.has(path) || [...files].some((file) => file.startsWith(`${path}/`));

/** Why `target`, linked from the shipped markdown file `from`, would be broken on npm, or undefined. */
function broken(target: string, from = 'README.md'): string | undefined {
  if (target.startsWith('#')) return anchorsOf(from).has(target.slice(1)) ? undefined : 'no such heading';
  const inRepository = target.startsWith(`${REPOSITORY}/`) || target.startsWith(RAW);
  if (inRepository) {
    const path = target.startsWith(RAW)
      ? target.slice(RAW.length)
      : target.slice(REPOSITORY.length + 1).replace(/^(blob|tree)\/main\//, '');
    const clean = path.replace(/#.*$/, '').replace(/\/$/, '');
    if (path === target.slice(REPOSITORY.length + 1) && !/^(blob|tree)\/main\//.test(path) && clean !== '') {
      return 'a repository link must point into blob/main or tree/main';
    }
    return holds(tracked, clean) ? undefined : 'the repository has no such file';
  }
  if (/^[a-z]+:/.test(target)) return target.startsWith('https://') ? undefined : 'not https';
  const [file = '', anchor] = target.split('#');
  const path = posix.normalize(posix.join(posix.dirname(from), file)).replace(/\/$/, '');
  if (!holds(shipped, path)) return 'a relative link the tarball does not ship (ship it, or link the repository)';
  if (anchor !== undefined && path.endsWith('.md') && !anchorsOf(path).has(anchor)) return 'no such heading there';
  return undefined;
}

/** The README and every shipped markdown page. */
const pages = [...shipped].filter((file) => file.endsWith('.md')).sort();

describe('links of the README and the shipped documents', () => {
  it('ships the README, the documents, SECURITY.md, the emulator README and the examples with their tests', () => {
    expect(pages).toEqual(
      expect.arrayContaining([
        'README.md',
        'SECURITY.md',
        'docs/reference.md',
        'docs/operating.md',
        'docs/step-up.md',
        'docs/testing.md',
        'docs/service-interface.md',
        'docs/demo.md',
        'emulator/README.md',
      ]),
    );
    expect([...shipped]).toEqual(
      expect.arrayContaining([
        'examples/js-app/app.js',
        'examples/js-app/test/app.test.js',
        'examples/ts-app/src/app.ts',
      ]),
    );
  });

  it.each(pages)('every link in %s names what the tarball or the repository really holds', (page) => {
    const found = links(readFileSync(join(ROOT, page), 'utf8'));
    expect(found.map((target) => [target, broken(target, page)]).filter(([, why]) => why !== undefined)).toEqual([]);
  });

  it('the check itself refuses a missing file, an unshipped relative path and an unknown anchor', () => {
    expect(broken(`${REPOSITORY}/blob/main/docs/no-such-page.md`)).toBe('the repository has no such file');
    expect(broken('middleware/index.ts')).toBe(
      'a relative link the tarball does not ship (ship it, or link the repository)',
    );
    expect(broken('#no-such-heading')).toBe('no such heading');
    expect(broken('docs/demo.md#no-such-heading')).toBe('no such heading there');
    expect(broken('docs/demo.md')).toBeUndefined();
    expect(broken('../README.md#install', 'docs/reference.md')).toBeUndefined();
  });

  it('package.json points npm at the repository, its homepage and its issues', () => {
    expect(manifest.repository.url).toBe(`git+${REPOSITORY}.git`);
    expect(manifest.homepage).toBe(`${REPOSITORY}#readme`);
    expect(manifest.bugs.url).toBe(`${REPOSITORY}/issues`);
  });
});
