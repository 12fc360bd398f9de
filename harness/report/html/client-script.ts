// The report page's script (plain browser JavaScript, inlined after the chart library): draws a
// run's section the first time it opens — from the run's JSON element, parsed only then — and opens
// the section a link or the URL's #fragment names. The parts are written without template
// literals, so they sit in these TS strings as they are: DOM helpers (client-dom.ts), the charts
// (client-charts.ts), the sections and the events (here).
import { CLIENT_CHARTS } from './client-charts.js';
import { CLIENT_DOM } from './client-dom.js';

const SECTIONS = String.raw`
  function problems(d) {
    if (!d.problems.length) return null;
    return part('Files', h('ul', { class: 'problems' }, d.problems.map(function (p) {
      return h('li', {}, p.file + ': ' + p.problem + ' — ' + p.detail);
    })));
  }

  function expectations(d, id) {
    if (!d.expectations.length) return part('Expectations', note('none recorded'));
    var first = true;
    var rows = d.expectations.map(function (e) {
      var attrs = { class: e.ok ? '' : 'bad' };
      if (!e.ok && first) { attrs.id = id + '-first-failure'; first = false; }
      return h('tr', attrs, h('td', { class: e.ok ? 'ok' : 'no' }, e.ok ? 'ok' : 'FAIL'), h('td', {}, e.name), h('td', { class: 'mono' }, e.detail));
    });
    var failed = d.expectations.filter(function (e) { return !e.ok; }).length;
    return part('Expectations (' + d.expectations.length + (failed ? ', ' + failed + ' failed' : '') + ')', table(['', 'expectation', 'detail'], rows, 'expectations'));
  }

  function memory(d, id) {
    var c = d.corrupt || [], l = d.leaked || [];
    var corrupt = c.length ? h('div', { id: id + '-corrupt' }, part('Memory oracle: PT reached memory the driver does not own (' + c.length + ')',
      table(['kind', 'cpu', 'addr', 'bytes', 'detail'], c.map(function (x) {
        return h('tr', { class: 'bad' }, h('td', {}, x.kind), h('td', {}, x.cpu), h('td', { class: 'mono' }, x.addr), h('td', {}, bytes(x.length)), h('td', { class: 'mono' }, x.detail));
      }), 'corrupt'))) : null;
    var leaked = l.length ? part('Leaked buffers: left allocated, tracing not confirmed off (' + l.length + ')',
      table(['base', 'size', 'held'], l.map(function (x) {
        return h('tr', {}, h('td', { class: 'mono' }, x.base), h('td', {}, bytes(x.size)), h('td', {}, x.role));
      }), 'leaked')) : null;
    return [corrupt, leaked];
  }

  function excerpt(d) {
    var x = d.excerpt;
    if (!x) return null;
    var pre = h('pre', { class: 'excerpt' });
    x.lines.forEach(function (l) {
      add(pre, h('span', { class: l.n === x.at ? 'at' : '' }, String(l.n).padStart(6) + '  ' + l.text));
      add(pre, '\n');
    });
    return part('Transcript excerpt: ' + x.why + ' (line ' + x.at + ')', pre);
  }

  function topa(d) {
    if (!d.topa.tables.length) return part('ToPA layout', note('no topa line in the transcript (single-range output, or tables written by hand)'));
    var boxes = d.topa.tables.map(function (t) {
      var rows = t.entries.map(function (e) {
        return h('tr', {}, h('td', {}, e.index), h('td', { class: 'mono' }, e.end ? '→ ' + e.region : e.region),
          h('td', {}, e.end ? '' : bytes(e.size)), h('td', {}, e.int ? 'INT' : ''), h('td', {}, e.stop ? 'STOP' : ''),
          h('td', {}, e.end ? 'END' : ''), h('td', {}, e.writes));
      });
      return h('div', {}, h('div', { class: 'mono' }, 'table ' + t.role + ' (' + t.addr + ')'),
        table(['entry', 'region', 'size', 'INT', 'STOP', 'END', 'writes'], rows, 'topa'),
        t.more ? note('… ' + t.more + ' more entries') : null);
    });
    return part('ToPA layout (each entry as last written)', h('div', { class: 'tables' }, boxes),
      d.topa.moreTables ? note('… ' + d.topa.moreTables + ' more tables') : null);
  }

  function fill(d, later) {
    var f = d.fill;
    if (!f) return part('Region fill', note('no OUTPUT_MASK_PTRS value in the transcript'));
    if (!f.series.length) return part('Region fill', note('no region was seen holding trace'));
    var el = h('div', { class: 'chart fill-chart' });
    later.push(function () { drawFill(el, f); });
    var why = f.mode === 'single' ? 'the single-range output buffer' : 'each ToPA output region';
    return part('Region fill: ' + why + ' (' + f.samples + ' pointer samples; lines join the samples)', el,
      f.more ? note(f.more + ' more regions not drawn') : null, f.thinned ? note('points thinned evenly to fit the page') : null);
  }

  function pmis(d, later) {
    var p = d.pmi;
    if (!p.count) return part('PMI timeline', note('no PMI was raised'));
    var el = h('div', { class: 'chart pmi-chart' });
    later.push(function () { drawPmis(el, p); });
    var rows = p.pmis.slice(0, 100).map(function (x, i) {
      return h('tr', {}, h('td', {}, i + 1), h('td', {}, x.line), h('td', {}, x.cpu), h('td', {}, ms(x.raised)), h('td', {}, ms(x.handled)),
        h('td', {}, x.handled === null ? 'not handled' : String(x.handled - x.raised)), h('td', {}, x.branch || '—'),
        h('td', {}, bytes(x.bytes)), h('td', {}, x.status), h('td', {}, x.topa ? 'yes' : 'no'));
    });
    var handled = p.pmis.filter(function (x) { return x.handled !== null; }).length;
    return part('PMI timeline (' + p.count + ' raised, ' + handled + (p.count > p.pmis.length ? ' of the first ' + p.pmis.length : '') + ' handled)', el,
      table(['#', 'line', 'cpu', 'raised ms', 'handled ms', 'µs', 'branch', 'bytes', 'STATUS', 'ToPA PMI'], rows, 'pmis'),
      p.pmis.length > 100 ? note('… the table lists the first 100; the chart has ' + p.pmis.length) : null);
  }

  function losses(d) {
    var l = d.losses;
    if (!l) return part('Loss ledger', note('losses.json missing'));
    var head = h('p', {}, 'written ' + bytes(l.written) + ' · collected ' + bytes(l.collected) + ' · dropped ' + bytes(l.dropped) + ' · ' +
      (l.lost.length ? l.lost.length + ' losses' : 'lossless'));
    var rows = l.lost.slice(0, 100).map(function (x) { return h('tr', {}, h('td', {}, x.at.toLocaleString('en')), h('td', {}, bytes(x.bytes)), h('td', {}, x.reason)); });
    return part('Loss ledger', head, l.lost.length ? table(['at (offset in trace.pt)', 'bytes', 'reason'], rows, 'losses') : null,
      l.lost.length > 100 ? note('… ' + (l.lost.length - 100) + ' more') : null);
  }

  function figures(d) {
    var keys = Object.keys(d.figures);
    if (!keys.length) return null;
    return part('Figures (result.json)', h('div', { class: 'grid' }, keys.map(function (k) {
      return h('div', {}, h('span', {}, k + ' '), String(d.figures[k]));
    })));
  }

  function files(d, det) {
    var dir = det.querySelector('.body').getAttribute('data-dir');
    return part('Run directory', h('p', { class: 'mono' }, dir + ' · ' + d.transcriptLines + ' transcript lines'),
      d.libipt ? h('pre', {}, d.libipt.ptdump + '\n' + d.libipt.ptxed) : null);
  }

  function render(det) {
    if (det.getAttribute('data-drawn')) return;
    det.setAttribute('data-drawn', '1');
    var body = det.querySelector('.body');
    var d;
    try {
      d = JSON.parse(document.getElementById('d-' + det.id).textContent);
    } catch (e) {
      body.replaceChildren(h('p', { class: 'problems' }, 'this run\'s data cannot be read: ' + e.message));
      return;
    }
    var later = [];
    body.replaceChildren();
    [problems(d), expectations(d, det.id), memory(d, det.id), excerpt(d), topa(d), fill(d, later), pmis(d, later), losses(d), figures(d), files(d, det)]
      .forEach(function (p) { add(body, p); });
    later.forEach(function (draw) {
      try { draw(); } catch (e) { add(body, h('p', { class: 'problems' }, 'a chart could not be drawn: ' + e.message)); }
    });
  }

  function open(id, scroll) {
    var det = id ? document.getElementById(id) : null;
    if (!det || det.tagName !== 'DETAILS') return;
    det.open = true;
    render(det);
    if (scroll) det.scrollIntoView();
  }

  document.addEventListener('toggle', function (e) {
    if (e.target.tagName === 'DETAILS' && e.target.open) render(e.target);
  }, true);
  document.addEventListener('click', function (e) {
    var a = e.target.closest ? e.target.closest('a[href^="#"]') : null;
    if (a) open(decodeURIComponent(a.getAttribute('href').slice(1)), false);
  });
  window.addEventListener('hashchange', function () { open(decodeURIComponent(location.hash.slice(1)), true); });
  if (location.hash) open(decodeURIComponent(location.hash.slice(1)), true);
`;

/** The page's whole script: one closure over the three parts. */
export const CLIENT_SCRIPT = `(function () {\n  'use strict';\n${CLIENT_DOM}${CLIENT_CHARTS}${SECTIONS}})();\n`;
