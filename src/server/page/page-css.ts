/** The page's stylesheet (served as `/assets/page.<hash>.css`): plain, readable, printable. */
export const PAGE_CSS = `:root {
  --fg: #1d2327; --muted: #5c6770; --line: #d9dee3; --bg: #ffffff; --panel: #f6f8fa;
  --critical: #c92a2a; --warning: #d9480f; --pending: #9c6500; --unknown: #6c757d; --standby: #4c6ef5; --ok: #2b8a3e;
}
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--fg); background: var(--bg); }
header.top { padding: 12px 24px; border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap;
  align-items: baseline; gap: 4px 24px; }
header.top h1 { font-size: 20px; margin: 0; }
header.top p { margin: 0; color: var(--muted); }
header.top form { margin-left: auto; }
main { padding: 8px 24px 32px; max-width: 1400px; }
h2 { font-size: 17px; margin: 0; }
h3 { font-size: 15px; margin: 0 0 4px; }
a { color: #1864ab; }
small, .muted { color: var(--muted); font-weight: normal; }
code { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.badge { display: inline-block; min-width: 64px; padding: 1px 8px; border-radius: 10px; color: #fff;
  font-size: 12px; font-weight: 600; text-align: center; text-transform: uppercase; letter-spacing: .03em; }
.badge.critical { background: var(--critical); } .badge.warning { background: var(--warning); }
.badge.unknown { background: var(--unknown); } .badge.standby { background: var(--standby); }
.badge.pending { background: var(--pending); }
.badge.ok, .badge.up { background: var(--ok); } .badge.down { background: var(--critical); }
table { border-collapse: collapse; }
th, td { text-align: left; padding: 3px 10px 3px 0; vertical-align: top; }
table.list { width: 100%; }
table.list th { border-bottom: 1px solid var(--line); color: var(--muted); font-weight: 600; }
table.list td { border-bottom: 1px solid var(--line); }
table.evidence th { font-weight: normal; color: var(--muted); padding-right: 16px; }
table.evidence td { font-variant-numeric: tabular-nums; }
section.overview, section.targets, section.errors { margin: 16px 0 24px; }
section.overview h2, section.targets h2, section.errors h2 { margin-bottom: 8px; }
section.queue { border: 1px solid var(--line); border-left-width: 6px; border-radius: 6px; padding: 12px 16px;
  margin: 16px 0; }
section.queue.critical { border-left-color: var(--critical); } section.queue.warning { border-left-color: var(--warning); }
section.queue.unknown { border-left-color: var(--unknown); } section.queue.standby { border-left-color: var(--standby); }
section.queue.ok { border-left-color: var(--ok); } section.queue.pending { border-left-color: var(--pending); }
section.queue > header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 12px; margin-bottom: 8px; }
article.finding { background: var(--panel); border-radius: 6px; padding: 10px 14px; margin: 8px 0; }
article.finding p { margin: 4px 0; }
article.finding .details { display: grid; grid-template-columns: minmax(240px, max-content) minmax(0, 1fr); gap: 8px 32px;
  align-items: start; }
@media (max-width: 900px) { article.finding .details { grid-template-columns: minmax(0, 1fr); } }
dl.advice { margin: 6px 0; display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; }
dl.advice dt { font-weight: 600; } dl.advice dd { margin: 0; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; margin: 8px 0; }
figure.chart { margin: 0; width: 360px; max-width: 100%; background: var(--bg); border: 1px solid var(--line);
  border-radius: 4px; padding: 6px 8px; }
figure.chart figcaption { font-weight: 600; font-size: 13px; }
figure.chart .plot { min-height: 40px; font-size: 12px; color: var(--muted); }
figure.chart .plot ul { margin: 4px 0; padding-left: 16px; }
ul.observations { margin: 4px 0; padding-left: 18px; }
p.quiet { margin: 4px 0; color: var(--muted); }
.error { color: var(--critical); }
form.login { max-width: 420px; margin: 48px auto; padding: 24px; border: 1px solid var(--line); border-radius: 8px; }
form.login label { display: block; margin: 12px 0 4px; font-weight: 600; }
form.login input[type=password] { width: 100%; padding: 6px 8px; font: inherit; }
form.login button, header.top button { margin-top: 12px; padding: 5px 14px; font: inherit; cursor: pointer; }
header.top button { margin-top: 0; }
`;
