/**
 * The page's stylesheet (served as `/assets/page.<hash>.css`): plain, readable, printable. From 360 px up nothing
 * scrolls sideways: the fleet list's rows reflow into stacked lines, tables into lists of named values
 * (`data-label`), charts take the width they have. Focus is always visible; statuses have a colour, an icon and a
 * word each.
 */
import { STATUS_COLORS } from './palette.js';

const statusVariables = Object.entries(STATUS_COLORS)
  .map(([status, color]) => `--${status}: ${color};`)
  .join(' ');
const statusRules = Object.keys(STATUS_COLORS)
  .map(
    (status) =>
      `.badge.${status} { background: var(--${status}); } details.queue.${status} { border-left-color: var(--${status}); }`,
  )
  .join('\n');

export const PAGE_CSS = `:root {
  --fg: #1d2327; --muted: #555f6b; --line: #d0d5dd; --bg: #ffffff; --panel: #f4f6f8; --link: #1864ab; --focus: #1d4ed8;
  ${statusVariables}
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--fg); background: var(--bg); overflow-wrap: anywhere; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
header.top { padding: 12px 24px; border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap;
  align-items: baseline; gap: 4px 24px; }
header.top h1 { font-size: 20px; margin: 0; }
header.top p { margin: 0; color: var(--muted); }
header.top form { margin-left: auto; }
main { padding: 8px 24px 32px; max-width: 1400px; }
h2 { font-size: 17px; margin: 0; }
h3 { font-size: 15px; margin: 0 0 4px; }
a { color: var(--link); }
small, .muted { color: var(--muted); font-weight: normal; }
code { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.badge { display: inline-flex; align-items: center; gap: 4px; min-width: 5.5em; justify-content: center; padding: 1px 8px;
  border-radius: 10px; color: #fff; background: var(--unknown); font-size: 12px; font-weight: 600; line-height: 18px;
  text-transform: uppercase; letter-spacing: .03em; white-space: nowrap; }
.badge .icon { font-size: 11px; }
${statusRules}
.badge.up { background: var(--ok); } .badge.down { background: var(--critical); }
.error { color: var(--critical); }

/* Legend and filters */
ul.legend { list-style: none; padding: 0; margin: 8px 0; display: flex; flex-wrap: wrap; gap: 4px 18px; font-size: 13px;
  color: var(--muted); }
ul.legend .chart-key { flex-basis: 100%; }
.key { display: inline-block; vertical-align: middle; }
.key.threshold { width: 22px; border-top: 2px dashed var(--warning); }
.key.onset { height: 14px; border-left: 2px dashed var(--pending); }
.key.fired { height: 14px; border-left: 2px solid var(--warning); }
form.filters { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: flex-end; margin: 8px 0 12px; padding: 10px 12px;
  background: var(--panel); border: 1px solid var(--line); border-radius: 6px; }
form.filters fieldset { border: 0; margin: 0; padding: 0; display: flex; flex-wrap: wrap; align-items: center; gap: 4px 12px; }
form.filters legend { float: left; margin-right: 8px; padding: 0; font-weight: 600; }
form.filters label.check { white-space: nowrap; }
form.filters label.select, form.filters label.search { display: flex; flex-direction: column; gap: 2px; font-weight: 600;
  max-width: 100%; }
form.filters select, form.filters input[type=search], form.filters button { font: inherit; min-height: 32px; max-width: 100%; }
form.filters select, form.filters input[type=search] { padding: 3px 6px; border: 1px solid #8a94a0; border-radius: 4px;
  background: var(--bg); color: var(--fg); }
form.filters input[type=search] { width: 20em; }
form.filters button { padding: 3px 12px; cursor: pointer; }
form.filters input[type=checkbox] { width: 18px; height: 18px; vertical-align: -4px; margin: 0 2px 0 0; }
form.filters .count { color: var(--muted); }
form.filters .shown { flex-basis: 100%; margin: 0; color: var(--muted); }

/* The fleet list: one row per queue */
.fleet-list { border-top: 1px solid var(--line); }
.list-head, details.queue > summary { display: grid;
  grid-template-columns: 7.5em minmax(7em, 1.1fr) minmax(8em, 1.2fr) minmax(12em, 3fr); gap: 2px 12px; align-items: baseline; }
.list-head { padding: 4px 8px 4px 32px; color: var(--muted); font-weight: 600; border-bottom: 1px solid var(--line); }
/* A row out of view is not laid out until it comes near (a fleet's thousand rows load fast); one line is its guess. */
details.queue { border-bottom: 1px solid var(--line); border-left: 5px solid var(--line); content-visibility: auto;
  contain-intrinsic-size: auto 44px; }
details.queue > summary { position: relative; padding: 7px 8px 7px 27px; cursor: pointer; list-style: none; }
details.queue > summary::-webkit-details-marker { display: none; }
details.queue > summary::before { content: "▸"; position: absolute; left: 9px; top: 7px; color: var(--muted); }
details.queue[open] > summary::before { content: "▾"; }
details.queue > summary:hover { background: var(--panel); }
details.queue > summary h2 { font-size: 15px; line-height: 1.3; }
details.queue > summary .where { color: var(--muted); font-size: 13px; }
details.queue > summary .where > span { margin-right: 10px; white-space: normal; }
details.queue > summary .where b { color: var(--fg); font-weight: 500; }
details.queue > summary .what .line { display: block; }
details.queue[open][data-rules] > summary .what { display: none; }
.pending-note { color: var(--pending); font-weight: 600; }
details.queue > .body { padding: 0 12px 12px 27px; }
p.queue-links { margin: 0 0 6px; font-size: 13px; }
p.quiet { margin: 4px 0; color: var(--muted); }

/* A finding */
article.finding { background: var(--panel); border-left: 4px solid var(--warning); border-radius: 6px; padding: 10px 14px;
  margin: 8px 0; }
article.finding.critical { border-left-color: var(--critical); }
article.finding.pending { border-left-color: var(--pending); }
article.finding h3 { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 10px; }
article.finding h3 code { color: var(--muted); font-weight: normal; }
article.finding .severity { color: var(--muted); font-size: 13px; font-weight: normal; }
article.finding small.pending { color: var(--pending); font-weight: 600; }
article.finding p { margin: 4px 0; }
article.finding .details { display: grid; grid-template-columns: minmax(22em, 1fr) minmax(0, 1.7fr); gap: 8px 28px;
  align-items: start; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: 3px 10px 3px 0; vertical-align: top; }
table.evidence { width: 100%; }
table.evidence caption { text-align: left; font-weight: 600; padding-bottom: 2px; }
table.evidence th { font-weight: normal; color: var(--muted); }
table.evidence tr.decisive th { color: var(--fg); font-weight: 600; }
table.evidence td { font-variant-numeric: tabular-nums; white-space: nowrap; }
table.evidence td.compared { white-space: normal; }
table.evidence td.compared { color: var(--muted); font-size: 12px; }
details.more > summary { cursor: pointer; color: var(--link); margin-top: 4px; }
dl.advice { margin: 6px 0; display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 12px; }
dl.advice dt { font-weight: 600; } dl.advice dd { margin: 0; }
ul.observations, ul.unknown { margin: 4px 0; padding-left: 18px; }

/* Charts */
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 330px), 1fr)); gap: 12px; margin: 8px 0; }
figure.chart { margin: 0; min-width: 0; background: var(--bg); border: 1px solid var(--line); border-radius: 4px;
  padding: 6px 8px; }
figure.chart figcaption { font-weight: 600; font-size: 13px; }
figure.chart .plot { min-height: 40px; font-size: 12px; color: var(--muted); overflow: hidden; }
figure.chart .plot ul { margin: 4px 0; padding-left: 16px; }
figure.chart .uplot { width: 100%; }
figure.chart .u-legend { font-size: 12px; text-align: left; color: var(--fg); }
figure.chart .u-legend.u-inline tr { margin-right: 10px; }
figure.chart .u-legend th { font-weight: normal; white-space: normal; }

/* Targets, errors, sign-in */
section.fleet, section.targets, section.errors { margin: 16px 0 24px; }
section.targets h2, section.errors h2 { margin-bottom: 8px; }
table.list { width: 100%; }
table.list th { border-bottom: 1px solid var(--line); color: var(--muted); font-weight: 600; }
table.list td { border-bottom: 1px solid var(--line); }
form.login { max-width: 420px; margin: 48px auto; padding: 24px; border: 1px solid var(--line); border-radius: 8px; }
form.login label { display: block; margin: 12px 0 4px; font-weight: 600; }
form.login input[type=password] { width: 100%; padding: 6px 8px; font: inherit; }
form.login button, header.top button { margin-top: 12px; padding: 5px 14px; font: inherit; cursor: pointer; }
header.top button { margin-top: 0; }

@media (max-width: 900px) {
  article.finding .details { grid-template-columns: minmax(0, 1fr); }
  .list-head { display: none; }
  details.queue > summary { grid-template-columns: auto minmax(0, 1fr); }
  details.queue > summary .where, details.queue > summary .what { grid-column: 1 / -1; }
}
@media (max-width: 720px) {
  header.top, main { padding-left: 12px; padding-right: 12px; }
  details.queue > .body { padding: 0 6px 10px 8px; }
  article.finding { padding: 8px 10px; }
  form.filters label.select, form.filters label.search { flex: 1 1 100%; }
  form.filters select, form.filters input[type=search] { width: 100%; }
  table.list thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.list, table.list tbody, table.list tr, table.list td { display: block; width: 100%; }
  table.list tr { border-bottom: 1px solid var(--line); padding: 6px 0; }
  table.list td { border: 0; padding: 1px 0; }
  table.list td::before { content: attr(data-label) ": "; color: var(--muted); }
  table.evidence tr { display: grid; grid-template-columns: minmax(0, 1fr) auto; }
  table.evidence td.compared { grid-column: 1 / -1; padding-top: 0; }
  table.evidence td.compared:empty { display: none; }
}
`;
