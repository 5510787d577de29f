/**
 * Texts sent and verified per country and day, drawn on the server as inline SVG (no script, no
 * chart library: the demo's CSP allows neither, and an operator page needs no more), one row of
 * day bars per country, the oldest day on the left.
 */
import type { PumpingDayCount } from 'hosted-sms-verify-kit';
import { html, type SafeHtml } from './layout.ts';
import type { OperatorTexts } from '../i18n/texts.ts';

/** One country's counts, a day per index (0 is the last 24 hours). */
export interface CountryDays {
  country: string;
  sent: number;
  days: Array<{ sent: number; verified: number }>;
}

/** The counts per country, the busiest first (then by code, so the order is stable). */
export function countriesByDay(counts: readonly PumpingDayCount[], days: number): CountryDays[] {
  const byCountry = new Map<string, CountryDays>();
  for (const count of counts) {
    if (count.daysAgo < 0 || count.daysAgo >= days) continue;
    const entry = byCountry.get(count.key) ?? {
      country: count.key,
      sent: 0,
      days: Array.from({ length: days }, () => ({ sent: 0, verified: 0 })),
    };
    const day = entry.days[count.daysAgo];
    if (day === undefined) continue;
    day.sent += count.sent;
    day.verified += count.verified;
    entry.sent += count.sent;
    byCountry.set(count.key, entry);
  }
  return [...byCountry.values()].sort((a, b) => b.sent - a.sent || a.country.localeCompare(b.country));
}

const LABEL_WIDTH = 48;
const BAR_WIDTH = 14;
const BAR_GAP = 6;
const ROW_HEIGHT = 44;
const BAR_MAX = 34;
const AXIS_HEIGHT = 22;
// The theme's accent: 8.6:1 on white, so the outlined (never verified) part keeps 3:1 against the card.
const ACCENT = '#4338ca';
const ACCENT_SOFT = '#eef0ff';
const MUTED = '#5d6578';

/** A bar's height for `n` texts: in proportion to the busiest day, and at least 1px for any text. */
function barHeight(n: number, max: number): number {
  if (n <= 0) return 0;
  return Math.max(1, Math.round((n / max) * BAR_MAX));
}

/**
 * The chart. It is aria-hidden, and the table after it is its accessible form: an SVG with
 * role="img" gets one name, so a screen reader would announce a picture whose numbers it cannot
 * read and then read the same numbers again in the table. The table, with its caption and header
 * cells, is read cell by cell; axe checks it like any table, and the hidden SVG holds nothing
 * focusable. Each bar's <title> is a tooltip for pointer users.
 */
export function textsChart(o: OperatorTexts, rows: readonly CountryDays[], days: number): SafeHtml {
  const width = LABEL_WIDTH + days * (BAR_WIDTH + BAR_GAP);
  const height = rows.length * ROW_HEIGHT + AXIS_HEIGHT;
  const max = Math.max(1, ...rows.flatMap((row) => row.days.map((day) => day.sent)));
  const xOf = (daysAgo: number) => LABEL_WIDTH + (days - 1 - daysAgo) * (BAR_WIDTH + BAR_GAP);
  return html`<svg class="chart" aria-hidden="true" focusable="false" xmlns="http://www.w3.org/2000/svg"
  viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">
${rows.map((row, index) => {
  const base = index * ROW_HEIGHT + 6 + BAR_MAX;
  return html`<g data-country="${row.country}">
<text x="0" y="${base - 10}" fill="${MUTED}" font-size="13" font-weight="600">${row.country}</text>
<line x1="${LABEL_WIDTH}" x2="${width}" y1="${base + 0.5}" y2="${base + 0.5}" stroke="#cdd2df"/>
${row.days.map((day, daysAgo) => {
  if (day.sent === 0) return '';
  const sentHeight = barHeight(day.sent, max);
  const verifiedHeight = Math.min(sentHeight, barHeight(day.verified, max));
  const x = xOf(daysAgo);
  return html`<g data-days-ago="${daysAgo}" data-sent="${day.sent}" data-verified="${day.verified}">
<title>${row.country}, ${o.dayLabel(daysAgo)}: ${o.sent} ${day.sent}, ${o.verified} ${day.verified}</title>
<rect x="${x + 0.5}" y="${base - sentHeight + 0.5}" width="${BAR_WIDTH - 1}" height="${Math.max(0, sentHeight - 1)}"
  fill="${ACCENT_SOFT}" stroke="${ACCENT}"/>
${
  verifiedHeight > 0
    ? html`<rect x="${x}" y="${base - verifiedHeight}" width="${BAR_WIDTH}" height="${verifiedHeight}" fill="${ACCENT}"/>`
    : ''
}
</g>`;
})}
</g>`;
})}
<text x="${LABEL_WIDTH}" y="${height - 6}" fill="${MUTED}" font-size="12">${o.chartOldest(days)}</text>
<text x="${width}" y="${height - 6}" fill="${MUTED}" font-size="12" text-anchor="end">${o.chartNewest}</text>
</svg>`;
}

/** The legend: what the outlined and the filled parts of a bar mean (hidden with the chart it explains). */
export function chartLegend(o: OperatorTexts): SafeHtml {
  return html`<ul class="legend" aria-hidden="true">
<li><span class="swatch unverified" aria-hidden="true"></span>${o.legendUnverified}</li>
<li><span class="swatch verified" aria-hidden="true"></span>${o.legendVerified}</li>
</ul>`;
}
