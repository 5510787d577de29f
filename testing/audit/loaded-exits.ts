/**
 * A redirect by what a page loads: the scripts it runs (its script files on the app's origin, the
 * modules and URLs they or its inline scripts import or fetch) and the pages of its frames on the
 * app's origin with theirs, found by the same reading the leak checks use. A script may send the
 * browser on from the URL it runs at (the page's, or a frame's or its parent's), so a planted value
 * in any of them counts.
 */
import type { Answer, Headers } from './agent.ts';
import { plantedExit, scriptCarries } from './page-exits.ts';
import { filesLoadedBy, onOrigin } from './subresources.ts';
import { pagePlantedUrlRead, plantedUrlRead } from './url-reads.ts';
import type { AuditUser, AuditWorld } from './world.ts';

/** The most files of one page read for a planted value (its scripts, its frames' pages, and theirs). */
const MOST_FILES = 10;

/** Per run, the files that could not be read (too slow, too big): waited for once, not on every visit. */
const unreadFiles = new WeakMap<AuditWorld, Set<string>>();

/** A file the page loads, and the URLs of the frames it runs in (outermost first; none in the page itself). */
interface Loaded {
  url: string;
  frames: string[];
}

/**
 * What in one `file` (at `path`) the `page` on the app's origin loads sends the browser on with a planted
 * value, said for evidence; `frames` are the URLs of the frames it runs in, itself if a page.
 */
function plantIn(
  file: Answer,
  path: string,
  frames: string[],
  page: { url: string; origin: string },
  marks: string[],
): string | undefined {
  const type = file.headers['content-type'] ?? '';
  // A script reads the URL it runs at (its frame's, innermost first) or a parent's, up to the page's.
  const urls = [...frames].reverse().concat(page.url);
  const readsPlantedUrl = (read: string) =>
    `reads a URL carrying a planted value (${read}) and sends the browser on by it`;
  if (/text\/html/i.test(type)) {
    const exit = plantedExit(file.body, type, file.url, page.origin, marks);
    if (exit !== undefined) return `${exit} of the frame ${path} the page loads carries a planted value`;
    const read = pagePlantedUrlRead(file.body, urls, marks);
    return read === undefined
      ? undefined
      : `${read.by} of the frame ${path} the page loads ${readsPlantedUrl(read.read)}`;
  }
  if (scriptCarries(file.body, marks)) return `the script ${path} the page loads carries a planted value`;
  const read = plantedUrlRead(file.body, urls, marks);
  if (read === undefined) return undefined;
  return `the script ${path} ${frames.length > 0 ? 'a frame of the page runs' : 'the page loads'} ${readsPlantedUrl(read)}`;
}

/**
 * What a file the page at `answer` loads (a script it runs or a frame's page, read up to MOST_FILES,
 * fetched by `user` with `headers`) sends the browser on with one of `marks` by, said for evidence.
 */
export async function loadedExitWithPlant(
  world: AuditWorld,
  user: AuditUser,
  answer: Answer,
  marks: string[],
  headers: Headers,
): Promise<string | undefined> {
  const { appOrigin } = world.options;
  const unread = unreadFiles.get(world) ?? new Set<string>();
  unreadFiles.set(world, unread);
  const pageType = answer.headers['content-type'] ?? '';
  const queue: Loaded[] = filesLoadedBy(answer.body, answer.url, pageType, appOrigin, true).map((url) => ({
    url,
    frames: [],
  }));
  const seen = new Set(queue.map((loaded) => loaded.url));
  for (let read = 0; read < MOST_FILES && queue.length > 0; read++) {
    const loaded = queue.shift() as Loaded;
    const path = new URL(loaded.url).pathname;
    if (unread.has(path)) continue;
    // A file that cannot be read shows nothing: the next hop says what the app does.
    const file = await user.agent.request(loaded.url, { headers: { referer: answer.url, ...headers } }).catch(() => {
      unread.add(path);
      return undefined;
    });
    // The browser follows a file's redirect (a name without its hash, to the hashed build), and a
    // frame's: what it runs is the file redirected to.
    const moved = file !== undefined && file.status >= 300 && file.status < 400 ? file.location : null;
    const target = moved === null ? undefined : onOrigin(moved, loaded.url, appOrigin);
    if (target !== undefined && !seen.has(target)) {
      seen.add(target);
      queue.push({ url: target, frames: loaded.frames });
    }
    if (file?.status !== 200) continue;
    const type = file.headers['content-type'] ?? '';
    // A frame's page runs itself and its files inside that frame; a script's imports run where it does.
    const frames = /text\/html/i.test(type) ? [...loaded.frames, loaded.url] : loaded.frames;
    const plant = plantIn(file, path, frames, { url: answer.url, origin: appOrigin }, marks);
    if (plant !== undefined) return plant;
    for (const url of filesLoadedBy(file.body, loaded.url, type, appOrigin, true)) {
      if (!seen.has(url)) queue.push({ url, frames });
      seen.add(url);
    }
  }
  return undefined;
}
