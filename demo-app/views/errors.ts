import { html, page, type DemoTexts, type Viewer } from './layout.ts';

/** The demo's own error pages (404, bad form, server error). Messages are written by the demo. */
export function errorPage(ctx: {
  t: DemoTexts;
  status: number;
  title: string;
  message: string;
  viewer?: Viewer;
}): string {
  return page({
    t: ctx.t,
    title: ctx.title,
    ...(ctx.viewer === undefined ? {} : { viewer: ctx.viewer }),
    narrow: true,
    body: html`<section class="card result bad">
<div class="icon" aria-hidden="true">!</div>
<h1>${ctx.title}</h1>
<p>${ctx.message}</p>
<div class="actions"><a class="btn" href="/">${ctx.t.backHome}</a></div>
</section>`,
  });
}
