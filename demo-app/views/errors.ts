import { html, page, type Viewer } from './layout.ts';

/** The demo's own error pages (404, bad form, server error). Messages are written by the demo. */
export function errorPage(ctx: { status: number; title: string; message: string; viewer?: Viewer }): string {
  return page({
    title: ctx.title,
    ...(ctx.viewer === undefined ? {} : { viewer: ctx.viewer }),
    narrow: true,
    body: html`<section class="card result bad">
<div class="icon" aria-hidden="true">!</div>
<h1>${ctx.title}</h1>
<p>${ctx.message}</p>
<div class="actions"><a class="btn" href="/">Back to home</a></div>
</section>`,
  });
}
