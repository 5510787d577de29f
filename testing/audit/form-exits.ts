/**
 * A form on the app's origin carrying a planted value in a field (a "Continue" form keeping a
 * remembered ?next= in a hidden input) leads wherever the route it submits to redirects: a script
 * may submit it, or the user press it. Each such form is submitted as the browser does.
 */
import { spelledText } from '../../middleware/shown-text.ts';
import { formsIn } from '../html-forms.ts';
import type { Answer, Headers } from './agent.ts';
import type { AuditUser, AuditWorld } from './world.ts';

/** The most forms of one page submitted. */
const MOST_FORMS = 3;

/** A form submitted, said for evidence (its method and path), and the app's answer. */
export interface Submitted {
  form: string;
  answer: Answer;
}

/**
 * Submits each form of `page` (HTML) whose target is on the app's origin and whose entries carry
 * one of `marks`, as `user`'s browser does (`headers` with it): a GET with its entries as the query,
 * a POST with them url-encoded and the page's origin. A form leaving the origin is judged as a link.
 */
export async function submitPlantedForms(
  world: AuditWorld,
  user: AuditUser,
  page: Answer,
  marks: readonly string[],
  headers: Headers,
): Promise<Submitted[]> {
  if (!/text\/html/i.test(page.headers['content-type'] ?? '')) return [];
  const lower = marks.map((mark) => mark.toLowerCase());
  // A field may keep the value percent-encoded: the route it posts to decodes it and redirects there all the same.
  const carries = (value: string) =>
    [value, spelledText(value)].some((view) => lower.some((mark) => view.toLowerCase().includes(mark)));
  const submitted: Submitted[] = [];
  for (const form of formsIn(page.body)) {
    if (submitted.length >= MOST_FORMS) break;
    if (form.method === 'dialog' || !form.entries.some(([, value]) => carries(value))) continue;
    let target: URL;
    try {
      target = world.resolve(form.action === '' ? page.url : form.action, page.url);
    } catch {
      continue;
    }
    if (target.origin !== world.options.appOrigin) continue;
    const body = new URLSearchParams(form.entries.map(([name, value]): [string, string] => [name, value])).toString();
    const sent = { referer: page.url, ...headers };
    const answer =
      form.method === 'post'
        ? await user.agent.request(target.href, {
            method: 'POST',
            headers: { ...world.sameOrigin(), 'content-type': 'application/x-www-form-urlencoded', ...sent },
            body,
          })
        : await user.agent.request(`${target.origin}${target.pathname}?${body}`, { headers: sent });
    submitted.push({ form: `a <form> (${form.method.toUpperCase()} ${target.pathname})`, answer });
  }
  return submitted;
}
