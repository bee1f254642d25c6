/**
 * The filter part of the page's script (see page-script.ts, which wraps it): the state of the filter form
 * (`filters.ts`), read from and written to the query string under the form's own names, and applied to the
 * fleet list's rows by their `data-group`, `data-rules`, `data-controller`, `data-namespace`, `data-cluster` and
 * the text of their summary (every word searched must occur, case aside).
 *
 * Plain browser JavaScript in a string, defining functions only; it runs inside the page script's closure.
 */
import { FILTER_PARAMETERS } from './filters.js';

export const FILTER_SCRIPT = `
  var FILTER_PARAMETERS = ${JSON.stringify(FILTER_PARAMETERS)};

  function emptyState() {
    var state = { status: [] };
    FILTER_PARAMETERS.forEach(function (name) { if (name !== 'status') state[name] = ''; });
    return state;
  }

  function stateFromQuery(search) {
    var params = new URLSearchParams(search);
    var state = emptyState();
    state.status = params.getAll('status');
    FILTER_PARAMETERS.forEach(function (name) { if (name !== 'status') state[name] = params.get(name) || ''; });
    return state;
  }

  function queryOf(state) {
    var params = new URLSearchParams();
    state.status.forEach(function (s) { params.append('status', s); });
    FILTER_PARAMETERS.forEach(function (name) { if (name !== 'status' && state[name]) params.append(name, state[name]); });
    var text = params.toString();
    return text === '' ? '' : '?' + text;
  }

  function readForm(form) {
    var state = emptyState();
    if (form === null) return state;
    form.querySelectorAll('input[name=status]').forEach(function (box) { if (box.checked) state.status.push(box.value); });
    FILTER_PARAMETERS.forEach(function (name) {
      var control = form.elements.namedItem(name);
      if (name !== 'status' && control && 'value' in control) state[name] = control.value;
    });
    return state;
  }

  /** Sets the form to \`state\`; a value a select lacks (a link from another report) is added, so it shows. */
  function writeForm(form, state) {
    if (form === null) return;
    form.querySelectorAll('input[name=status]').forEach(function (box) { box.checked = state.status.indexOf(box.value) >= 0; });
    FILTER_PARAMETERS.forEach(function (name) {
      if (name === 'status') return;
      var control = form.elements.namedItem(name);
      if (!control) return;
      if (control.tagName === 'SELECT' && state[name] && !Array.prototype.some.call(control.options, function (o) { return o.value === state[name]; })) {
        var option = document.createElement('option');
        option.value = state[name];
        option.textContent = state[name] + ' (0)';
        control.appendChild(option);
      }
      control.value = state[name];
    });
  }

  function rowText(row) {
    if (row.wqdText === undefined) {
      var summary = row.querySelector('summary');
      row.wqdText = [row.id, summary ? summary.textContent : '', row.getAttribute('data-rules') || ''].join(' ').toLowerCase();
    }
    return row.wqdText;
  }

  function rowMatches(row, state, words) {
    var data = row.dataset;
    if (state.status.length > 0 && state.status.indexOf(data.group) < 0) return false;
    if (state.rule && (' ' + (data.rules || '') + ' ').indexOf(' ' + state.rule + ' ') < 0) return false;
    if (state.controller && data.controller !== state.controller) return false;
    if (state.namespace && data.namespace !== state.namespace) return false;
    if (state.cluster && data.cluster !== state.cluster) return false;
    var text = words.length > 0 ? rowText(row) : '';
    return words.every(function (w) { return text.indexOf(w) >= 0; });
  }

  /** Shows the rows \`state\` selects, hides the others, and says how many are shown. */
  function applyFilters(state) {
    var rows = document.querySelectorAll('details.queue');
    var words = state.q.toLowerCase().split(/\\s+/).filter(function (w) { return w !== ''; });
    var shown = 0;
    rows.forEach(function (row) {
      var keep = rowMatches(row, state, words);
      row.hidden = !keep;
      if (keep) shown++;
    });
    var filtered = queryOf(state) !== '';
    var counter = document.getElementById('shown');
    if (counter !== null) {
      counter.textContent = filtered
        ? 'Showing ' + shown + ' of ' + rows.length + ' queue' + (rows.length === 1 ? '' : 's') + '.'
        : rows.length + ' queue' + (rows.length === 1 ? '' : 's') + '.';
    }
    var none = document.querySelector('.fleet-list .none');
    if (none !== null) none.hidden = shown > 0;
  }
`;
