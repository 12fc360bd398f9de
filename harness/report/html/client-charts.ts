// The report page's charts (plain browser JavaScript, part of the page's script: client-script.ts):
// uPlot (chart-library.ts) drawing a run's region fill and PMI timeline from its section data
// (view-model.ts FillView, PmiTimeline). Uses `bytes` of client-dom.ts.
export const CLIENT_CHARTS = String.raw`
  var COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
    '#bcbd22', '#17becf', '#393b79', '#637939', '#8c6d31', '#843c39', '#7b4173', '#3182bd'];

  function fromZero(u, min, max) { return [0, max > 0 ? max * 1.1 : 1]; }
  function chartWidth(el) { return Math.max(320, Math.min(1100, (el.closest('.body') || document.body).clientWidth - 30)); }

  // Region fill: one lane per region (lane k spans k … k+0.9 on the y scale), so regions that fill
  // at the same moments do not hide each other; the legend (few regions) shows the bytes.
  var LANE = 0.9;
  function drawFill(el, f) {
    var n = f.series.length;
    var xs = Array.from(new Set([].concat.apply([], f.series.map(function (s) { return s.points.map(function (p) { return p[0]; }); })))).sort(function (a, b) { return a - b; });
    var at = new Map(xs.map(function (x, i) { return [x, i]; }));
    var data = [xs.map(function (x) { return x / 1000; })].concat(f.series.map(function (s, k) {
      var lane = n - 1 - k;
      var y = xs.map(function () { return null; });
      s.points.forEach(function (p) { y[at.get(p[0])] = lane + LANE * p[1] / s.size; });
      return y;
    }));
    new uPlot({
      // The lanes name the regions; a legend of many regions would only repeat them.
      width: chartWidth(el), height: Math.max(200, 34 * n + 70), scales: { x: { time: false }, y: { range: [0, n] } }, legend: { show: n <= 6 },
      axes: [{ label: 'ms since the first transcript line' },
        { label: 'region (empty → full)', size: 90, splits: function () { return f.series.map(function (s, k) { return n - 1 - k; }); },
          values: function (u, v) { return v.map(function (y) { var s = f.series[n - 1 - y]; return s ? s.region : ''; }); } }],
      series: [{ label: 'ms' }].concat(f.series.map(function (s, k) {
        var lane = n - 1 - k;
        return { label: s.region + ' (' + bytes(s.size) + ')', stroke: COLORS[k % COLORS.length], width: 1.5, spanGaps: true, points: { show: true, size: 5 },
          value: function (u, v) { return v === null || v === undefined ? '—' : bytes(Math.round((v - lane) / LANE * s.size)); } };
      })),
    }, data, el);
  }

  // PMI timeline: each PMI's bytes by the branch its handler took (points), and its handling time
  // on a second axis.
  function drawPmis(el, p) {
    var branches = Array.from(new Set(p.pmis.map(function (x) { return x.branch || '(no note)'; })));
    var data = [p.pmis.map(function (x) { return x.raised / 1000; })]
      .concat(branches.map(function (b) { return p.pmis.map(function (x) { return (x.branch || '(no note)') === b ? x.bytes : null; }); }))
      .concat([p.pmis.map(function (x) { return x.handled === null ? null : x.handled - x.raised; })]);
    new uPlot({
      width: chartWidth(el), height: 240, scales: { x: { time: false }, y: { range: fromZero }, us: { range: fromZero } },
      axes: [{ label: 'ms since the first transcript line (PMI raised)' },
        { label: 'bytes per PMI', size: 70, values: function (u, v) { return v.map(bytes); } },
        { scale: 'us', side: 1, label: 'µs to handle', size: 60, grid: { show: false } }],
      series: [{ label: 'ms' }].concat(branches.map(function (b, i) {
        return { label: 'pmi: ' + b, stroke: COLORS[i % COLORS.length], fill: COLORS[i % COLORS.length], paths: function () { return null; }, points: { show: true, size: 8 }, value: function (u, v) { return bytes(v); } };
      })).concat([{ label: 'handling µs', scale: 'us', stroke: '#999', dash: [4, 4], width: 1, spanGaps: true, points: { show: true, size: 4 } }]),
    }, data, el);
  }
`;
