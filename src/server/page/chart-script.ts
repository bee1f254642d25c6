/**
 * The chart part of the page's script (see page-script.ts, which wraps it): draws one figure with uPlot from its
 * spec and its queue's values (`ChartPayload`). Each series has its own colour and dash; each threshold is a
 * dashed line in the finding's severity colour, listed in the legend; the times the condition began to hold
 * and fired are vertical lines (the x axis reaches a pending finding's fire time); the y axis says its unit;
 * times are UTC, as on the rest of the page. A drawn figure gets the class `drawn` and keeps what was drawn in
 * `figure.wqd` (`plot`, `spec`, the marker kinds drawn), which the tests read.
 *
 * Plain browser JavaScript in a string, defining functions only; it runs inside the page script's closure.
 */

import { UNIT_WORDS } from './chart-figures.js';
import { ONSET_DASH, SERIES_STYLES, STATUS_COLORS, THRESHOLD_DASH } from './palette.js';

export const CHART_SCRIPT = `
  var SERIES_STYLES = ${JSON.stringify(SERIES_STYLES)};
  var SEVERITY_COLORS = ${JSON.stringify({ warning: STATUS_COLORS.warning, critical: STATUS_COLORS.critical })};
  var ONSET_COLOR = ${JSON.stringify(STATUS_COLORS.pending)};
  var THRESHOLD_DASH = ${JSON.stringify(THRESHOLD_DASH)};
  var ONSET_DASH = ${JSON.stringify(ONSET_DASH)};
  var UNIT_WORDS = ${JSON.stringify(UNIT_WORDS)};
  var CHART_HEIGHT = 170;

  function round(n) {
    if (!isFinite(n)) return String(n);
    if (n === 0) return '0';
    var digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(n))));
    return String(Number(n.toFixed(Math.min(digits, 6))));
  }

  function format(n, unit) {
    if (n == null) return '–';
    if (unit === 's') {
      var a = Math.abs(n);
      if (a === 0) return '0s';
      if (a < 1) return round(n * 1000) + 'ms';
      if (a < 120) return round(n) + 's';
      if (a < 7200) return round(n / 60) + 'm';
      return round(n / 3600) + 'h';
    }
    if (unit === '1/s') return round(n) + '/s';
    if (unit === 'ratio') return round(n * 100) + '%';
    if (Math.abs(n) >= 10000) return round(n / 1000) + 'k';
    return round(n);
  }

  /** A time as HH:MM in UTC, as the page shows times. */
  function clock(ts) {
    var d = new Date(ts * 1000);
    return ('0' + d.getUTCHours()).slice(-2) + ':' + ('0' + d.getUTCMinutes()).slice(-2);
  }

  function scaled(dash) {
    var ratio = window.devicePixelRatio || 1;
    return dash.map(function (d) { return d * ratio; });
  }

  /** The markers' vertical lines and words, over the plot area; one before the window sits at its left edge. */
  function drawMarkers(u, figure, spec) {
    var ctx = u.ctx;
    var ratio = window.devicePixelRatio || 1;
    var left = u.bbox.left;
    var right = u.bbox.left + u.bbox.width;
    var drawn = [];
    spec.markers.forEach(function (m) {
      var x = u.valToPos(m.t, 'x', true);
      var label = m.label;
      if (x < left) {
        x = left;
        label = m.label + ' (earlier)';
      }
      if (!(x <= right + 0.5)) return;
      var color = m.kind === 'onset' ? ONSET_COLOR : SEVERITY_COLORS[spec.severity] || SEVERITY_COLORS.warning;
      ctx.save();
      ctx.strokeStyle = color;
      ctx.fillStyle = color;
      ctx.lineWidth = 2 * ratio;
      ctx.setLineDash(m.kind === 'onset' ? scaled(ONSET_DASH) : []);
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      ctx.font = 'bold ' + 11 * ratio + 'px system-ui, sans-serif';
      var rightHalf = x > left + u.bbox.width / 2;
      ctx.textAlign = rightHalf ? 'right' : 'left';
      ctx.fillText(label, x + (rightHalf ? -4 : 4) * ratio, u.bbox.top + (m.kind === 'onset' ? 12 : 26) * ratio);
      ctx.restore();
      drawn.push(m.kind);
    });
    if (figure.wqd) figure.wqd.markers = drawn;
  }

  /** Draws \`figure\` from \`spec\`, its queue's \`values\` and \`times\` (unix seconds); false when it has no room yet. */
  function drawChart(figure, spec, values, times) {
    var place = figure.querySelector('.plot');
    if (place === null || typeof uPlot !== 'function') return false;
    var width = Math.floor(place.getBoundingClientRect().width);
    if (!(width > 0)) return false;
    var xs = times.slice();
    var last = xs.length > 0 ? xs[xs.length - 1] : 0;
    var latest = spec.markers.reduce(function (t, m) { return Math.max(t, m.t); }, last);
    var extended = latest > last;
    if (extended) xs.push(latest);
    var series = [{ label: 'time (UTC)' }];
    var columns = [xs];
    spec.signals.forEach(function (s, k) {
      var style = SERIES_STYLES[k % SERIES_STYLES.length];
      series.push({ label: s.title, stroke: style.color, dash: scaled(style.dash), width: 2, spanGaps: false,
        points: { show: false } });
      var column = (values[s.id] || []).slice();
      if (extended) column.push(null);
      columns.push(column);
    });
    spec.thresholds.forEach(function (t) {
      series.push({ label: 'threshold ' + t.label, stroke: SEVERITY_COLORS[spec.severity] || SEVERITY_COLORS.warning,
        dash: scaled(THRESHOLD_DASH), width: 1.5, points: { show: false } });
      columns.push(xs.map(function () { return t.value; }));
    });
    var unit = spec.unit;
    place.textContent = '';
    figure.wqd = { spec: spec, markers: [] };
    figure.wqd.plot = new uPlot({
      width: width,
      height: CHART_HEIGHT,
      series: series,
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'); },
      scales: { x: { time: true }, y: { range: function (u, min, max) { return [Math.min(0, min), max > 0 ? max * 1.1 : 1]; } } },
      axes: [
        { size: 30, values: function (u, splits) { return splits.map(clock); } },
        { label: UNIT_WORDS[unit], labelSize: 16, size: 52,
          values: function (u, splits) { return splits.map(function (v) { return format(v, unit); }); } },
      ],
      legend: { show: true, live: false },
      cursor: { drag: { x: false, y: false } },
      hooks: { draw: [function (u) { drawMarkers(u, figure, spec); }] },
    }, columns, place);
    figure.classList.add('drawn');
    return true;
  }

  /** Fits a drawn figure to the width its place has now. */
  function fitChart(figure) {
    var plot = figure.wqd && figure.wqd.plot;
    var place = figure.querySelector('.plot');
    if (!plot || place === null) return;
    var width = Math.floor(place.getBoundingClientRect().width);
    if (width > 0 && Math.abs(width - plot.width) > 1) plot.setSize({ width: width, height: CHART_HEIGHT });
  }
`;
