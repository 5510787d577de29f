/**
 * Signing a user in through the app's own sign-in form (`signIn` given as a form, not a function):
 * the form's page, its fields posted, then the kit's start token read from the page holding the
 * start form.
 */
import { hiddenField, type AuditAgent } from './agent.ts';
import { callHook } from './hooks.ts';
import type { SignInForm } from './options.ts';

/** What signing in by the form needs of the run: the hooks' deadline, same-origin headers, the start path. */
export interface SignInContext {
  timeoutMs: number;
  sameOrigin: Record<string, string>;
  startPath: string;
}

/** Signs `user` in on `agent` through `form`; the start token the app's page then holds. */
export async function signInByForm(
  agent: AuditAgent,
  user: string,
  form: SignInForm,
  context: SignInContext,
): Promise<{ csrf: string }> {
  const page = await agent.request(form.path);
  const token = hiddenField(page.body, form.tokenField ?? '_csrf');
  const answer = await agent.postForm(
    form.action ?? form.path,
    {
      ...(token === undefined ? {} : { [form.tokenField ?? '_csrf']: token }),
      ...(await callHook(`your signIn form's fields('${user}')`, context.timeoutMs, () => form.fields(user))),
    },
    context.sameOrigin,
  );
  if (answer.status >= 400) throw new Error(`sign-in as ${user} answered ${answer.status}`);
  const csrf = await startTokenShown(agent, form.csrfFrom ?? '/', context.startPath);
  if (csrf === undefined) throw new Error(`no start form with a _csrf field on ${form.csrfFrom ?? '/'}`);
  return { csrf };
}

/** The kit's start token the page at `page` shows `agent` now, in its start form (posting to `startPath`). */
export async function startTokenShown(agent: AuditAgent, page: string, startPath: string): Promise<string | undefined> {
  const shown = await agent.request(page);
  return hiddenField(shown.body, '_csrf', { path: startPath, pageUrl: shown.url });
}
