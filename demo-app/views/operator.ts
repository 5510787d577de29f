/**
 * The operator page: SMS pumping as the kit counts it (kit.pumping). Texts per country and day (a
 * chart and the same numbers as a table), the keys whose rules trip now, the recent decisions, the
 * operators' rules in force, and a form that blocks or releases a country or a number block.
 */
import type { PumpingDayCount, PumpingDecisionRecord, PumpingRule, TrippedKey } from 'hosted-sms-verify-kit';
import type { OperatorTexts } from '../i18n/texts.ts';
import { formatTime, html, page, type DemoTexts, type SafeHtml, type Viewer } from './layout.ts';
import { chartLegend, countriesByDay, textsChart, type CountryDays } from './texts-chart.ts';

/** What kit.pumping read for the page. */
export interface PumpingView {
  days: number;
  counts: readonly PumpingDayCount[];
  tripped: readonly TrippedKey[];
  decisions: readonly PumpingDecisionRecord[];
  rules: readonly PumpingRule[];
}

/** The chart draws at most this many countries; the table lists them all. */
const CHART_COUNTRIES = 8;

/**
 * A key as an operator reads it. A number block shows as the block with its last three digits
 * masked: a decision holds the block, never the number, and the page never shows more of it.
 */
function keyLabel(dimension: string, key: string): string {
  return dimension === 'block' ? `${key}•••` : key;
}

function countryName(lang: string, code: string): string {
  const name = new Intl.DisplayNames([lang], { type: 'region', fallback: 'none' }).of(code);
  return name === undefined ? code : `${name} (${code})`;
}

function reasonList(reasons: readonly string[]): SafeHtml {
  return html`${reasons.map((reason, index) => html`${index > 0 ? ', ' : ''}<code>${reason}</code>`)}`;
}

function countsSection(t: DemoTexts, view: PumpingView): SafeHtml {
  const o = t.operator;
  const rows = countriesByDay(view.counts, view.days);
  const drawn: CountryDays[] = rows.slice(0, CHART_COUNTRIES);
  return html`<section class="card" aria-labelledby="texts-heading">
<h2 id="texts-heading">${o.chartTitle}</h2>
<p class="muted">${o.chartLead(view.days)}${rows.length > CHART_COUNTRIES ? html` ${o.chartTop(CHART_COUNTRIES)}` : ''}</p>
${
  rows.length === 0
    ? html`<p class="empty" id="texts-empty">${o.noTexts(view.days)}</p>`
    : html`<div class="chart-box">${textsChart(o, drawn, view.days)}${chartLegend(o)}</div>
<table id="texts-table">
<caption class="sr-only">${o.tableCaption(view.days)}</caption>
<thead><tr><th scope="col">${o.country}</th><th scope="col">${o.day}</th><th scope="col" class="num">${o.sent}</th>
<th scope="col" class="num">${o.verified}</th><th scope="col" class="num">${o.unverified}</th></tr></thead>
<tbody>
${rows.flatMap((row) =>
  row.days.flatMap((day, daysAgo) =>
    day.sent === 0 && day.verified === 0
      ? []
      : [
          html`<tr data-country="${row.country}" data-days-ago="${daysAgo}">
<th scope="row">${countryName(t.lang, row.country)}</th><td>${o.dayLabel(daysAgo)}</td>
<td class="num">${day.sent}</td><td class="num">${day.verified}</td><td class="num">${Math.max(0, day.sent - day.verified)}</td>
</tr>`,
        ],
  ),
)}
</tbody>
</table>`
}
</section>`;
}

function trippedSection(t: DemoTexts, tripped: readonly TrippedKey[]): SafeHtml {
  const o = t.operator;
  return html`<section class="card" aria-labelledby="tripped-heading">
<h2 id="tripped-heading">${o.trippedTitle}</h2>
<p class="muted">${o.trippedLead}</p>
${
  tripped.length === 0
    ? html`<p class="empty">${o.noneTripped}</p>`
    : html`<table id="tripped-table">
<caption class="sr-only">${o.trippedCaption}</caption>
<thead><tr><th scope="col">${o.kind}</th><th scope="col">${o.key}</th><th scope="col">${o.reasons}</th>
<th scope="col">${o.lastHour}</th><th scope="col">${o.lastDay}</th><th scope="col">${o.operatorRule}</th></tr></thead>
<tbody>
${tripped.map(
  (key) => html`<tr data-dimension="${key.dimension}" data-key="${keyLabel(key.dimension, key.key)}">
<td>${o.kinds[key.dimension]}</td><th scope="row"><code>${keyLabel(key.dimension, key.key)}</code></th>
<td>${key.reasons.length === 0 ? o.none : reasonList(key.reasons)}</td>
<td>${o.countOf(key.unverifiedLastHour, key.hourlyThreshold)}</td>
<td>${o.countOf(key.unverifiedLastDay, key.dailyThreshold)}</td>
<td>${key.rule === undefined ? o.none : o.rules[key.rule]}</td>
</tr>`,
)}
</tbody>
</table>`
}
</section>`;
}

function decisionsSection(t: DemoTexts, decisions: readonly PumpingDecisionRecord[]): SafeHtml {
  const o = t.operator;
  return html`<section class="card" aria-labelledby="decisions-heading">
<h2 id="decisions-heading">${o.decisionsTitle}</h2>
<p class="muted">${o.decisionsLead}</p>
${
  decisions.length === 0
    ? html`<p class="empty">${o.noDecisions}</p>`
    : html`<table id="decisions-table">
<caption class="sr-only">${o.decisionsCaption}</caption>
<thead><tr><th scope="col">${o.when}</th><th scope="col">${o.decision}</th><th scope="col">${o.reasons}</th>
<th scope="col">${o.country}</th><th scope="col">${o.numberBlock}</th><th scope="col">${o.address}</th>
<th scope="col">${o.user}</th></tr></thead>
<tbody>
${decisions.map(
  (d) => html`<tr data-decision="${d.decision}">
<td class="when">${formatTime(d.decidedAt)}</td><td>${o.decisions[d.decision]}</td><td>${reasonList(d.reasons)}</td>
<td>${d.country}</td><td><code>${keyLabel('block', d.block)}</code></td><td><code>${d.address}</code></td>
<td><code>${d.userRef}</code></td>
</tr>`,
)}
</tbody>
</table>`
}
</section>`;
}

function rulesSection(
  t: DemoTexts,
  viewer: Viewer,
  rules: readonly PumpingRule[],
  form: { error?: string; target?: string },
): SafeHtml {
  const o = t.operator;
  const described = form.error === undefined ? 'target-hint' : 'target-error target-hint';
  return html`<section class="card" aria-labelledby="rules-heading">
<h2 id="rules-heading">${o.rulesTitle}</h2>
${
  rules.length === 0
    ? html`<p class="empty">${o.noRules}</p>`
    : html`<table id="rules-table">
<caption class="sr-only">${o.rulesCaption}</caption>
<thead><tr><th scope="col">${o.kind}</th><th scope="col">${o.key}</th><th scope="col">${o.operatorRule}</th>
<th scope="col">${o.until}</th></tr></thead>
<tbody>
${rules.map(
  (rule) => html`<tr data-dimension="${rule.dimension}" data-rule="${rule.rule}">
<td>${o.kinds[rule.dimension]}</td><th scope="row"><code>${keyLabel(rule.dimension, rule.key)}</code></th>
<td>${o.rules[rule.rule]}</td><td class="when">${formatTime(rule.until)}</td>
</tr>`,
)}
</tbody>
</table>`
}
<h3 id="act-heading">${o.actTitle}</h3>
<p class="muted">${o.actLead}</p>
<form method="post" action="/operator/pumping" aria-labelledby="act-heading">
<input type="hidden" name="_csrf" value="${viewer.csrf}">
<fieldset><legend>${o.actLegend}</legend>
${(['block', 'release', 'clear'] as const).map(
  (act, index) =>
    html`<label class="choice"><input type="radio" name="act" value="${act}"${
      index === 0 ? html` checked` : ''
    }> ${o.acts[act]}</label>`,
)}
</fieldset>
<label for="target">${o.target}</label>
${form.error === undefined ? '' : html`<p class="alert bad" id="target-error">${form.error}</p>`}
<input type="text" id="target" name="target" required maxlength="20" autocomplete="off" spellcheck="false"
  value="${form.target ?? ''}" aria-describedby="${described}"${form.error === undefined ? '' : html` aria-invalid="true"`}>
<p class="hint" id="target-hint">${o.targetHint}</p>
<button class="btn" type="submit">${o.submit}</button>
</form>
</section>`;
}

export function operatorPage(ctx: {
  t: DemoTexts;
  viewer: Viewer;
  /** Undefined when the kit's SMS pumping rules are off. */
  view: PumpingView | undefined;
  /** What the last block, release or removal did. */
  notice?: string;
  error?: string;
  target?: string;
}): string {
  const o: OperatorTexts = ctx.t.operator;
  const view = ctx.view;
  return page({
    t: ctx.t,
    title: o.title,
    viewer: ctx.viewer,
    nav: 'operator',
    body: html`<h1>${o.title}</h1>
<p class="lead">${o.lead}</p>
${ctx.notice === undefined ? '' : html`<p id="operator-notice" role="status"><strong>${ctx.notice}</strong></p>`}
${
  view === undefined
    ? html`<section class="card"><p id="pumping-off">${o.off}</p></section>`
    : html`<div class="stack">
${countsSection(ctx.t, view)}
${trippedSection(ctx.t, view.tripped)}
${decisionsSection(ctx.t, view.decisions)}
${rulesSection(ctx.t, ctx.viewer, view.rules, {
  ...(ctx.error === undefined ? {} : { error: ctx.error }),
  ...(ctx.target === undefined ? {} : { target: ctx.target }),
})}
</div>`
}`,
  });
}
