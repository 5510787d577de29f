/**
 * The README is what npm shows, so every link in it must work for someone who never cloned the
 * repository: links into the repository are absolute and name a file (or folder) the repository
 * holds; a relative link must name a file the tarball ships; `#anchors` name a heading of the README.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './scratch.ts';

const REPOSITORY = 'https://github.com/hosted-sms-verify-kit/hosted-sms-verify-kit';
const RAW = 'https://raw.githubusercontent.com/hosted-sms-verify-kit/hosted-sms-verify-kit/main/';
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  repository: { url: string };
  homepage: string;
  bugs: { url: string };
};

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

const tracked = new Set(execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n'));
const shipped = new Set(['README.md', 'LICENSE', 'CHANGELOG.md', 'package.json']);
const anchors = new Set(
  readme
    .replace(/```[\s\S]*?```/g, '')
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => slug(line.replace(/^#+ /, ''))),
);

/** Why `target` would be broken for a reader on npm, or undefined when it works. */
function broken(target: string): string | undefined {
  if (target.startsWith('#')) return anchors.has(target.slice(1)) ? undefined : 'no such heading';
  const inRepository = target.startsWith(`${REPOSITORY}/`) || target.startsWith(RAW);
  if (inRepository) {
    const path = target.startsWith(RAW)
      ? target.slice(RAW.length)
      : target.slice(REPOSITORY.length + 1).replace(/^(blob|tree)\/main\//, '');
    const clean = path.replace(/#.*$/, '').replace(/\/$/, '');
    if (path === target.slice(REPOSITORY.length + 1) && !/^(blob|tree)\/main\//.test(path) && clean !== '') {
      return 'a repository link must point into blob/main or tree/main';
    }
    const exists = clean === '' || tracked.has(clean) || [...tracked].some((file) => file.startsWith(`${clean}/`));
    return exists ? undefined : 'the repository has no such file';
  }
  if (/^[a-z]+:/.test(target)) return target.startsWith('https://') ? undefined : 'not https';
  return shipped.has(target) ? undefined : 'a relative link the tarball does not ship (make it absolute)';
}

describe('README links', () => {
  it('every link names what the repository or the tarball really holds', () => {
    const found = links(readme);
    expect(found.length).toBeGreaterThan(20);
    expect(found.map((target) => [target, broken(target)]).filter(([, why]) => why !== undefined)).toEqual([]);
  });

  it('the check itself refuses a missing file, a relative repository path and an unknown anchor', () => {
    expect(broken(`${REPOSITORY}/blob/main/docs/no-such-page.md`)).toBe('the repository has no such file');
    expect(broken('docs/demo.md')).toBe('a relative link the tarball does not ship (make it absolute)');
    expect(broken('#no-such-heading')).toBe('no such heading');
    expect(broken(`${REPOSITORY}/blob/main/docs/demo.md`)).toBeUndefined();
  });

  it('package.json points npm at the repository, its homepage and its issues', () => {
    expect(manifest.repository.url).toBe(`git+${REPOSITORY}.git`);
    expect(manifest.homepage).toBe(`${REPOSITORY}#readme`);
    expect(manifest.bugs.url).toBe(`${REPOSITORY}/issues`);
  });
});
