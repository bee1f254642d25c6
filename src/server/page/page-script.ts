/**
 * The page's only script (served as `/assets/page.<hash>.js`). It
 * - shows the filter form, applies the filters the URL's query string holds, and keeps the query string in step
 *   with the form (`history.replaceState`), so a link shares a view (filter-script.ts);
 * - draws each chart when it comes near the viewport (chart-script.ts), from the data the page carries inline
 *   (`<script type="application/json" id="wqd-series">`), or, for a row shown closed, from `queue-charts/<id>`
 *   fetched when the row is opened;
 * - opens the row a `#q-<id>` link points at; on a phone, starts with every other row closed (one line each);
 * - refreshes the page's content every evaluation interval by fetching the page again and swapping its
 *   `<main>`, keeping what the reader did: the filters (and the field being typed in), the rows they opened or
 *   closed.
 * It marks `wqd-filtered` once the filters are applied and `wqd-charts` once the first charts are drawn
 * (`performance.mark`), which the page benchmark reads. Without JavaScript the page reads in full (each chart's
 * place says its latest values) and a `<noscript>` meta refresh reloads it.
 *
 * Plain browser JavaScript in a string: it is not compiled with the service and must stay small.
 */
import { CHART_SCRIPT } from './chart-script.js';
import { FILTER_SCRIPT } from './filter-script.js';

export const PAGE_SCRIPT = `(function () {
  'use strict';
${CHART_SCRIPT}
${FILTER_SCRIPT}

  // ---- the charts' data: figure specs by key, values and times by queue ----
  var store = { figures: {}, values: {}, times: {} };

  function absorb(payload) {
    (payload.figures || []).forEach(function (f) {
      store.figures[f.key] = f;
      store.times[f.queue] = payload.times;
    });
    Object.keys(payload.values || {}).forEach(function (q) { store.values[q] = payload.values[q]; });
  }

  function readInline() {
    store = { figures: {}, values: {}, times: {} };
    var el = document.getElementById('wqd-series');
    if (el === null) return;
    try {
      absorb(JSON.parse(el.textContent || '{}'));
    } catch (e) {}
  }

  var chartsMarked = false;
  function drawFigure(figure) {
    var spec = store.figures[figure.getAttribute('data-figure')];
    if (!spec || !store.values[spec.queue] || !store.times[spec.queue]) return;
    if (drawChart(figure, spec, store.values[spec.queue], store.times[spec.queue]) && !chartsMarked) {
      chartsMarked = true;
      performance.mark('wqd-charts');
    }
  }

  var observer = 'IntersectionObserver' in window
    ? new IntersectionObserver(function (entries) {
        entries.forEach(function (entry) {
          if (!entry.isIntersecting) return;
          observer.unobserve(entry.target);
          drawFigure(entry.target);
        });
      }, { rootMargin: '300px 0px' })
    : null;

  function watchFigures(root) {
    root.querySelectorAll('figure.chart[data-figure]').forEach(function (figure) {
      if (figure.classList.contains('drawn')) return;
      if (observer !== null) observer.observe(figure);
      else drawFigure(figure);
    });
  }

  function figureElement(spec) {
    var figure = document.createElement('figure');
    figure.className = 'chart';
    figure.setAttribute('data-queue', spec.queue);
    figure.setAttribute('data-figure', spec.key);
    var caption = document.createElement('figcaption');
    caption.textContent = spec.title + ' ';
    var unit = document.createElement('small');
    unit.textContent = UNIT_WORDS[spec.unit] || '';
    caption.appendChild(unit);
    var plot = document.createElement('div');
    plot.className = 'plot';
    figure.appendChild(caption);
    figure.appendChild(plot);
    return figure;
  }

  /** Fills a closed row's chart places when it is opened. */
  function loadCharts(row) {
    var places = row.querySelectorAll('.charts[data-lazy]');
    if (places.length === 0 || row.wqdLoading) return;
    row.wqdLoading = true;
    var id = row.id.replace(/^q-/, '');
    fetch('queue-charts/' + encodeURIComponent(id), { credentials: 'same-origin', headers: { accept: 'application/json' }, cache: 'no-store' })
      .then(function (response) { return response.ok ? response.json() : Promise.reject(new Error(String(response.status))); })
      .then(function (payload) {
        absorb(payload);
        places.forEach(function (place) {
          var own = payload.figures.filter(function (f) { return f.group === place.getAttribute('data-group'); });
          place.removeAttribute('data-lazy');
          place.textContent = '';
          if (own.length === 0) {
            var none = document.createElement('p');
            none.className = 'quiet';
            none.textContent = 'No chart data in the window.';
            place.appendChild(none);
          }
          own.forEach(function (spec) { place.appendChild(figureElement(spec)); });
        });
        watchFigures(row);
      })
      .catch(function () {
        places.forEach(function (place) { place.textContent = 'The charts could not be loaded; opening the queue again retries.'; });
      })
      .then(function () { row.wqdLoading = false; });
  }

  // ---- rows: what the reader opened or closed survives a refresh ----
  var userOpen = {};
  document.addEventListener('click', function (event) {
    var summary = event.target.closest && event.target.closest('details.queue > summary');
    if (summary) userOpen[summary.parentElement.id] = !summary.parentElement.open;
  });
  document.addEventListener('toggle', function (event) {
    var row = event.target;
    if (row.matches && row.matches('details.queue') && row.open) loadCharts(row);
  }, true);

  /**
   * On a phone the list starts as one line per queue: the rows shown open close, unless the reader opened them or
   * a link points at one.
   */
  var narrow = window.matchMedia ? window.matchMedia('(max-width: 720px)') : null;
  function fitRowsToScreen() {
    if (narrow === null || !narrow.matches) return;
    document.querySelectorAll('details.queue[open]').forEach(function (row) {
      var linked = location.hash === '#' + encodeURIComponent(row.id) || location.hash === '#' + row.id;
      if (!linked && !Object.prototype.hasOwnProperty.call(userOpen, row.id)) row.open = false;
    });
  }

  function openLinkedRow() {
    if (location.hash.length < 2) return;
    var row = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (row === null || !row.matches('details.queue')) return;
    row.open = true;
    row.scrollIntoView();
  }

  // ---- filters ----
  function form() { return document.getElementById('filters'); }

  function filterFromForm() {
    var state = readForm(form());
    applyFilters(state);
    history.replaceState(history.state, '', location.pathname + queryOf(state) + location.hash);
  }

  function setUpForm() {
    var f = form();
    if (f === null) return;
    f.hidden = false;
    f.addEventListener('input', filterFromForm);
    f.addEventListener('change', filterFromForm);
    f.addEventListener('submit', function (event) { event.preventDefault(); });
    f.addEventListener('reset', function () { setTimeout(filterFromForm, 0); });
  }

  // ---- refresh ----
  function swap(html) {
    var next = new DOMParser().parseFromString(html, 'text/html');
    var main = document.querySelector('main');
    var fresh = next.querySelector('main');
    if (main === null || fresh === null) return;
    var before = form();
    var state = readForm(before);
    var active = document.activeElement;
    var focus = before !== null && active && active.form === before && active.name ? { name: active.name,
      value: active.value, start: active.selectionStart, end: active.selectionEnd } : null;
    main.replaceWith(document.adoptNode(fresh));
    readInline();
    document.querySelectorAll('details.queue').forEach(function (row) {
      if (Object.prototype.hasOwnProperty.call(userOpen, row.id)) row.open = userOpen[row.id];
    });
    fitRowsToScreen();
    setUpForm();
    writeForm(form(), state);
    applyFilters(state);
    if (focus !== null && form() !== null) {
      var again = Array.prototype.find.call(form().elements, function (e) { return e.name === focus.name && (e.type !== 'checkbox' || e.value === focus.value); });
      if (again) {
        again.focus();
        if (typeof focus.start === 'number' && 'setSelectionRange' in again) {
          try { again.setSelectionRange(focus.start, focus.end); } catch (e) {}
        }
      }
    }
    watchFigures(document);
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
        .then(function (html) { if (html) swap(html); })
        .catch(function () {})
        .then(function () { refresh(seconds); });
    }, seconds * 1000);
  }

  var resizing;
  window.addEventListener('resize', function () {
    clearTimeout(resizing);
    resizing = setTimeout(function () { document.querySelectorAll('figure.chart.drawn').forEach(fitChart); }, 150);
  });
  window.addEventListener('hashchange', openLinkedRow);
  window.addEventListener('popstate', function () {
    var state = stateFromQuery(location.search);
    writeForm(form(), state);
    applyFilters(state);
  });

  readInline();
  fitRowsToScreen();
  setUpForm();
  var initial = stateFromQuery(location.search);
  writeForm(form(), initial);
  applyFilters(initial);
  openLinkedRow();
  performance.mark('wqd-filtered');
  watchFigures(document);
  var main = document.querySelector('main');
  var seconds = main === null ? 0 : Number(main.getAttribute('data-refresh-seconds'));
  if (seconds > 0) refresh(seconds);
})();
`;
