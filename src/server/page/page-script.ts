/**
 * The page's only script (served as `/assets/page.<hash>.js`): draws the charts with uPlot from the series
 * the page carries inline (`<script type="application/json" id="wqd-series">`), and refreshes the page's
 * content every evaluation interval by fetching the page again and swapping its `<main>`, then drawing
 * again. Without JavaScript the page reads in full (each chart's place says its latest values) and a
 * `<noscript>` meta refresh reloads it.
 *
 * Plain browser JavaScript in a string: it is not compiled with the service and must stay small.
 */
export const PAGE_SCRIPT = `(function () {
  'use strict';
  var COLORS = ['#1c6fd1', '#d9480f', '#2b8a3e', '#7048e8'];

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

  function readData() {
    var el = document.getElementById('wqd-series');
    if (el === null) return null;
    try {
      return JSON.parse(el.textContent || '');
    } catch (e) {
      return null;
    }
  }

  function drawChart(figure, data) {
    var queue = data.queues[figure.getAttribute('data-queue')];
    var chart = data.charts[figure.getAttribute('data-chart')];
    var place = figure.querySelector('.plot');
    if (!queue || !chart || place === null) return;
    var unit = chart.unit;
    var series = [{ label: 'time' }];
    var columns = [data.times];
    chart.signals.forEach(function (s, k) {
      series.push({
        label: s.title,
        stroke: COLORS[k % COLORS.length],
        width: 2,
        spanGaps: false,
        value: function (u, v) { return format(v, unit); },
      });
      columns.push(queue[s.id] || []);
    });
    var width = Math.max(240, Math.floor(place.getBoundingClientRect().width) || 320);
    place.textContent = '';
    new uPlot({
      width: width,
      height: 150,
      series: series,
      scales: { x: { time: true }, y: { range: function (u, min, max) { return [Math.min(0, min), max > 0 ? max * 1.1 : 1]; } } },
      axes: [
        { size: 30 },
        { size: 56, values: function (u, splits) { return splits.map(function (v) { return format(v, unit); }); } },
      ],
      legend: { show: true, live: false },
      cursor: { drag: { x: false, y: false } },
    }, columns, place);
    figure.classList.add('drawn');
  }

  function draw() {
    var data = readData();
    if (data === null || typeof uPlot !== 'function') return;
    var figures = document.querySelectorAll('figure.chart[data-queue][data-chart]');
    for (var i = 0; i < figures.length; i++) drawChart(figures[i], data);
  }

  function refresh(seconds) {
    setTimeout(function () {
      fetch(location.pathname, { credentials: 'same-origin', headers: { accept: 'text/html' }, cache: 'no-store' })
        .then(function (response) {
          if (response.status === 401) {
            location.reload();
            return null;
          }
          return response.ok ? response.text() : null;
        })
        .then(function (html) {
          if (html) {
            var next = new DOMParser().parseFromString(html, 'text/html');
            var main = document.querySelector('main');
            var fresh = next.querySelector('main');
            if (main !== null && fresh !== null) {
              main.replaceWith(document.adoptNode(fresh));
              draw();
            }
          }
        })
        .catch(function () {})
        .then(function () { refresh(seconds); });
    }, seconds * 1000);
  }

  draw();
  var main = document.querySelector('main');
  var seconds = main === null ? 0 : Number(main.getAttribute('data-refresh-seconds'));
  if (seconds > 0) refresh(seconds);
})();
`;
